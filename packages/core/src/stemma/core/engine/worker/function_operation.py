"""``FunctionOperation``: a lazy function step as the engine runs it, a one-unit operation.

The lazy front door lowers ``apply(name, fn, …)`` to a
:class:`~stemma.core.graph.step_spec.StepSpec`; this module makes that spec an operation like any
other (design note 0008): one execution unit whose outputs are the step's ``OUT`` (a file-ref
artifact with a content hash, role ``output``) and its return value (a metric artifact, role
``value``). Its keys are the spec's: the step key is the spec's fingerprint and the execution key
is :func:`execution_key`, both byte for byte what stemma has always computed for function steps,
so existing roots keep their cache.

Two instances exist per step: the orchestrator's holds the spec (the whole lowered graph above
it), and the copy sent to a worker holds only the :class:`FunctionCall`, so a unit's payload is
the size of one call, not of the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from pydantic import ConfigDict

from stemma.core.artifact import Artifact
from stemma.core.graph.step import deps_by_argument
from stemma.core.graph.step_spec import StepSpec
from stemma.core.identity import hash_plain
from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.kinds import OperationKind
from stemma.core.operations.specs import OutputSpec

OUTPUT_ROLE = "output"
"""The role of a function step's ``OUT`` file ref."""
VALUE_ROLE = "value"
"""The role of a function step's return value (a metric)."""
OUTPUT_TYPE = "output_type"
"""The key of the artifact's type (``apply(..., type=)``) in the step's final event."""
TYPE_KEY = "type"
"""The key of the artifact's type in its output's metadata."""


@dataclass(frozen=True, kw_only=True)
class FunctionCall:
    """What a worker needs to run one function step: the call, resolved, and where it goes."""

    fn: Callable[..., Any]
    """The step's function, pickled by reference (module and name)."""
    kwargs: Mapping[str, Any]
    """Its arguments with ``OUT`` as ``scratch`` and every dep as its output path."""
    output_relpath: str
    """Where the output is published, relative to the store root."""
    scratch: str
    """The absolute path ``OUT`` stands for while ``fn`` runs (renamed to the output after)."""
    output_type: str | None = None
    """The artifact's type given to ``apply`` (``type=``), put in the output's metadata."""
    write_url: str | None = None
    """Where the function was told to write with its own tools (``OUT_URL``) on a root in an
    object store: what it put there is brought into ``scratch`` once it returns. None when the
    step did not ask for it, or its root is on a filesystem (``OUT_URL`` is then ``scratch``)."""


class FunctionOperation(OperationDefinition):
    """A plain function as a one-unit creator; built by the lazy front door, never by users."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: ClassVar[str | None] = "stemma.function"
    description: ClassVar[str] = "A lazy function step: fn(**inputs) with OUT published"
    outputs: ClassVar[Mapping[str, OutputSpec]] = {
        OUTPUT_ROLE: OutputSpec(artifact_type="file_ref", infer_lineage_from={"inputs": []}),
        VALUE_ROLE: OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": []}),
    }
    loads_inputs: ClassVar[bool] = False

    step_name: str
    """The step's name (records name the operation by it, as they always have)."""
    step_version: str
    """The step's version."""
    config: dict[str, Any]
    """The step's fingerprint-time config: what its events and execution rows record."""
    # (typed Any: pydantic would validate a dataclass field into a copy, and the scheduler
    # relies on the spec's identity; the properties below give the types back)
    lowered: Any = None
    """The lowered :class:`StepSpec`; the orchestrator's instance only."""
    built_deps: Any = None
    """``{fingerprint: Artifact}`` of deps found already built (never submitted as steps)."""
    resolved: Any = None
    """The :class:`FunctionCall`; the worker's instance only."""

    @property
    def spec(self) -> StepSpec:
        """The lowered step (orchestrator side)."""
        if not isinstance(self.lowered, StepSpec):
            raise TypeError(f"step {self.step_name!r}: a worker's copy has no spec")
        return self.lowered

    @property
    def call(self) -> FunctionCall | None:
        """The resolved call (worker side); None on the orchestrator's instance."""
        return self.resolved if isinstance(self.resolved, FunctionCall) else None

    def known_deps(self) -> Mapping[str, Artifact]:
        """Deps found already built when the run started, by fingerprint."""
        return cast("Mapping[str, Artifact]", self.built_deps or {})

    @classmethod
    def of(
        cls, spec: StepSpec, built: Mapping[str, Artifact], **settings: Any
    ) -> FunctionOperation:
        """The orchestrator's operation for ``spec`` (``resources=``, ``execution=`` may follow).

        Args:
            spec: the lowered step.
            built: the artifacts of its deps that were built before the run (by fingerprint).
            **settings: ``resources`` and ``execution``, never part of a key.
        """
        return cls(
            step_name=spec.name,
            step_version=spec.version,
            config=spec.config,
            lowered=spec,
            built_deps=dict(built),
            **settings,
        )

    def for_worker(self, call: FunctionCall) -> FunctionOperation:
        """The copy a unit carries: the call, without the graph."""
        return self.model_copy(update={"lowered": None, "built_deps": None, "resolved": call})

    def label(self) -> str:  # noqa: D102
        return self.step_name

    def version_label(self) -> str:  # noqa: D102
        return self.step_version

    def key_params(self) -> dict[str, Any]:
        """The config, as function-step execution rows have always recorded it."""
        return self.config

    def overrides(self) -> dict[str, Any]:  # noqa: D102
        return {}

    def event_params(self) -> dict[str, Any]:
        """The config itself: ``stemma explain`` diffs it against the step's earlier runs."""
        return self.config

    def execute(self, inp: Any) -> Any:  # noqa: D102
        raise TypeError("a function step runs through stemma.core.engine.worker.function_lifecycle")

    def postprocess(self, inp: Any) -> Any:  # noqa: D102
        raise TypeError("a function step runs through stemma.core.engine.worker.function_lifecycle")


FunctionOperation.kind = OperationKind.FUNCTION


def execution_key(spec: StepSpec, inputs: Mapping[str, tuple[str, ...]]) -> str:
    """The role-aware execution key: name, version, params, sorted artifact ids per role.

    Params are the inputs with each dep as its position; the deps appear per role, by the
    artifacts they delivered. So swapping two roles' inputs is a different execution, while the
    order in which one role's artifacts arrived is not. Never in it: paths of this step's own
    output, run ids, resources or the backend.
    """
    return hash_plain(
        {
            "name": spec.name,
            "version": spec.version,
            "params": spec.step.template,
            "overrides": {},
            "inputs": {role: sorted(ids) for role, ids in inputs.items()},
        }
    )


def input_artifact_ids(spec: StepSpec, deps: Mapping[str, Artifact]) -> dict[str, tuple[str, ...]]:
    """Per argument, the artifact ids of the deps found in it (what the execution key holds)."""
    by_handle = {id(dep.step): deps[dep.fingerprint].artifact_id for dep in spec.deps}
    return {
        role: tuple(by_handle[id(handle)] for handle in handles)
        for role, handles in deps_by_argument(spec.step).items()
    }


def built_outputs(spec: StepSpec, outputs: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """What a function step's final event names of what it built (empty when not both made).

    With the artifact's type given to ``apply`` (``type=``), ``output_type`` too.

    Args:
        spec: the step.
        outputs: the artifact ids its unit made, by role (``output`` and ``value``).
    """
    made = {role: sorted(ids) for role, ids in outputs.items()}
    if not (made.get(OUTPUT_ROLE) and made.get(VALUE_ROLE)):
        return {}
    built = {
        "output_path": spec.output_relpath,
        "output_artifact_id": made[OUTPUT_ROLE][0],
        "value_artifact_id": made[VALUE_ROLE][0],
    }
    if spec.type is not None:
        built[OUTPUT_TYPE] = spec.type
    return built
