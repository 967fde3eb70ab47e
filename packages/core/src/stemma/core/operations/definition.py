"""``OperationDefinition``: the class users subclass to declare an operation, and its registry.

An operation is a pydantic model. Its class variables declare what it is (``name``, roles,
pairing); its fields are what a step may set (``params``, ``resources``, ``execution``,
``environment``, ``tool``). A class overriding ``execute_curator`` is a curator; otherwise it is
a creator with ``preprocess`` / ``execute`` / ``postprocess``. Mistakes in the declaration are
caught by the ``class`` statement itself, with a message naming the class, field and fix.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stemma.core.canonical import to_canonical
from stemma.core.errors import (
    OperationConfigError,
)
from stemma.core.operations.declaration_checks import (
    check_composite,
    check_creator,
    check_curator,
    check_declaration,
    check_lineage_roles,
    detect_kind,
    refuse,
)
from stemma.core.operations.kinds import OperationKind as OperationKind  # (re-exported)
from stemma.core.operations.pairing import GroupBy
from stemma.core.operations.registry import register
from stemma.core.operations.results import (
    ArtifactResult,
    ExecuteInput,
    PassthroughResult,
    PostprocessInput,
    PreprocessInput,
)
from stemma.core.operations.specs import (
    Execution,
    InputSpec,
    OutputSpec,
    Resources,
    describe_validation_error,
)

if TYPE_CHECKING:
    import polars as pl


class NoParams(BaseModel, frozen=True, extra="forbid"):
    """The params of an operation that takes none."""


class OperationDefinition(BaseModel):
    """Base class of every operation; subclass it and set ``name`` to register one.

    Declare params as a nested ``class Params(BaseModel)``; it becomes the ``params`` field.
    Also write ``params: Params = Params()`` when you want type checkers to know its type.
    A subclass without its own ``name`` is an abstract intermediate: not checked or registered.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ClassVar[str | None] = None
    """The registered name; steps and tables use it."""
    version: ClassVar[str] = "v0"
    """Bump it when the code changes what the operation produces: it is part of both keys."""
    description: ClassVar[str] = ""
    """One line for listings and the dashboard."""
    inputs: ClassVar[Mapping[str, InputSpec]] = {}
    """``{role: InputSpec}``."""
    outputs: ClassVar[Mapping[str, OutputSpec]] = {}
    """``{role: OutputSpec}``."""
    group_by: ClassVar[GroupBy | None] = None
    """How several input roles are paired; None for a single role."""
    anchor_role: ClassVar[str | None] = None
    """Anchor matching (a creator's): each artifact of this primary role is paired on its own
    with the artifacts of every other role that share an ancestor with it (one group per
    combination), and an anchor artifact without a match in every role is left out. Implies
    ``group_by=LINEAGE``; any number of other roles."""
    runtime_defined_inputs: ClassVar[bool] = False
    """Inputs are a list of streams whose roles are known only at run time (``Merge``)."""
    independent_input_streams: ClassVar[bool] = False
    """Input roles are batched separately instead of paired."""
    Params: ClassVar[type[BaseModel]] = NoParams
    """The params model; subclasses replace it with a nested class."""
    kind: ClassVar[OperationKind] = OperationKind.CREATOR
    """Set when the class is defined: curator when ``execute_curator`` is overridden."""
    loads_inputs: ClassVar[bool] = True
    """Whether a worker reads the unit's input artifacts from the store before it runs."""

    if not TYPE_CHECKING:  # declared per subclass, with its own Params type
        params: BaseModel = Field(default_factory=NoParams)
    resources: Resources = Field(default_factory=Resources)
    """What each worker asks of its machine."""
    execution: Execution = Field(default_factory=Execution)
    """Batching and worker limits."""
    environment: dict[str, str] = Field(default_factory=dict[str, str])
    """Environment variable overrides for the tool; part of the key."""
    tool: dict[str, Any] = Field(default_factory=dict[str, Any])
    """Tool-specific overrides (an executable path, a container image); part of the key."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Runs before pydantic collects the fields, so a nested Params becomes the field's type.
        super().__init_subclass__(**kwargs)
        own = inspect.get_annotations(cls)
        params_class = cls.__dict__.get("Params", NoParams)
        if not (isinstance(params_class, type) and issubclass(params_class, BaseModel)):
            refuse(cls, "Params must be a nested class deriving from pydantic.BaseModel")
        if "Params" in cls.__dict__ and "params" not in own:
            cls.__annotations__ = {**own, "params": cls.Params}
            cls.params = Field(default_factory=cls.Params)  # pyright: ignore[reportAttributeAccessIssue]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Check the declaration of a class with its own ``name``, then register it."""
        super().__pydantic_init_subclass__(**kwargs)
        if "name" not in cls.__dict__ and cls.name is not None:
            refuse(cls, f"inherits name {cls.name!r}; set its own name (None: abstract)")
        if cls.__dict__.get("name") is None:
            return
        check_declaration(cls)
        cls.kind = detect_kind(cls)
        if cls.kind is OperationKind.CREATOR:
            check_creator(cls)
        elif cls.kind is OperationKind.COMPOSITE:
            check_composite(cls)
        else:
            check_curator(cls)
        check_lineage_roles(cls)
        register(cls)

    @field_validator("params", mode="before", check_fields=False)
    @classmethod
    def _known_params(cls, value: Any) -> Any:
        # Checked here, not by Params' own config, so unknown params fail even when a user's
        # Params model allows extra fields.
        _check_param_keys(cls, value)
        if isinstance(value, Mapping):
            # Validate into the class's own Params: an operation without one would otherwise
            # have pydantic try to build the abstract BaseModel of the base field.
            return cls.Params.model_validate(value)
        return value

    @classmethod
    def build(
        cls,
        *,
        params: Mapping[str, Any] | BaseModel | None = None,
        resources: Mapping[str, Any] | Resources | None = None,
        execution: Mapping[str, Any] | Execution | None = None,
        environment: Mapping[str, str] | None = None,
        tool: Mapping[str, Any] | None = None,
    ) -> Self:
        """Validate user-given settings into an instance; None leaves a setting at its default.

        Raises:
            OperationConfigError: a key is unknown or a value invalid; the message names the
                operation and the field, and lists what is accepted.
        """
        given = {
            "params": params,
            "resources": resources,
            "execution": execution,
            "environment": environment,
            "tool": tool,
        }
        try:
            return cls.model_validate({key: v for key, v in given.items() if v is not None})
        except ValidationError as err:
            accepted = {
                "params": sorted(_accepted_params(cls)),
                "resources": sorted(Resources.model_fields),
                "execution": sorted(Execution.model_fields),
            }
            message = describe_validation_error(err, accepted)
            raise OperationConfigError(f"operation {cls.name!r}: {message}") from err

    @classmethod
    def is_curator(cls) -> bool:
        """Whether the class overrides ``execute_curator``."""
        return cls.kind is OperationKind.CURATOR

    def label(self) -> str:
        """What records name the operation by: its registered name."""
        return self.name or type(self).__name__

    def version_label(self) -> str:
        """The version records carry and both keys hold: the class's ``version``."""
        return type(self).version

    def event_params(self) -> dict[str, Any]:
        """What a step's events record as its params (``stemma explain`` diffs them)."""
        return {"params": self.key_params(), "overrides": self.overrides()}

    def params_model(self) -> BaseModel:
        """The validated params, typed as their base class (subclasses use ``self.params``)."""
        params: BaseModel = self.__dict__["params"]
        return params

    def key_params(self) -> dict[str, Any]:
        """Every param with defaults filled in, canonical: what the step fingerprint hashes."""
        dumped = self.params_model().model_dump(mode="python")
        return to_canonical(dumped, f"{self.name}.params")

    def overrides(self) -> dict[str, Any]:
        """The environment and tool overrides, canonical: also part of both keys."""
        return {
            "environment": to_canonical(self.environment, f"{self.name}.environment"),
            "tool": to_canonical(self.tool, f"{self.name}.tool"),
        }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        """Creators: prepare the execution; the dict is handed to ``execute``."""
        return {}

    def execute(self, inp: ExecuteInput) -> Any:
        """Creators: do the work, writing outputs under ``inp.execute_dir``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement execute")

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        """Creators: turn the files ``execute`` left into drafts by output role."""
        return ArtifactResult()

    def execute_curator(
        self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
    ) -> ArtifactResult | PassthroughResult:
        """Curators: work over DataFrames of the inputs (each with an ``artifact_id`` column).

        ``store`` is a read-only view of the artifact store, for walking lineage.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement execute_curator")


def _check_param_keys(cls: type[OperationDefinition], value: Any) -> None:
    if isinstance(value, Mapping):
        keys: list[str] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        accepted = _accepted_params(cls)
        if unknown := [key for key in keys if key not in accepted]:
            raise ValueError(
                f"unknown param {', '.join(map(repr, unknown))}; accepted params: "
                f"{', '.join(sorted(accepted)) or '(none)'}"
            )


def _accepted_params(cls: type[OperationDefinition]) -> set[str]:
    fields = cls.Params.model_fields
    return set(fields) | {f.alias for f in fields.values() if f.alias}
