"""What an operation declares: the artifact types of its roles, and what it asks of a machine.

Artifact types (built in and user-registered) are kept here because role specs name them;
``InputSpec`` / ``OutputSpec`` describe roles; ``Resources`` and ``Execution`` are the per-step
knobs a user may override. None of them is part of a key except the specs' artifact types, so
``Resources`` and ``Execution`` can change freely without a rerun.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from stemma.core.errors import ArtifactTypeError

_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
DEFAULT_ELEMENT_SECONDS = 180.0
"""``Execution.element_seconds`` by default: three minutes of work per SLURM array element."""
_TIME_LIMIT = re.compile(r"^(\d+-)?\d+(:\d{2}){0,2}$")

LineageSource = Literal["inputs", "outputs"]
"""Where an output's lineage comes from: the execution's inputs or its other outputs."""


class ColumnType(StrEnum):
    """The logical type of a content-table column; stores map it to their own schema types."""

    STRING = "string"
    INT64 = "int64"
    FLOAT64 = "float64"
    BOOL = "bool"
    BINARY = "binary"
    JSON = "json"
    STRING_LIST = "list<string>"


COMMON_COLUMNS: tuple[str, ...] = (
    "artifact_id",
    "content",
    "original_name",
    "extension",
    "size",
    "origin_step",
    "origin_step_name",
    "metadata",
)
"""Columns every content table has; a type's ``schema_fields`` add to them."""


@dataclass(frozen=True, kw_only=True)
class ArtifactType:
    """A kind of artifact and the content table its rows go to."""

    key: str
    """The type key operations name in their specs (``"data"``)."""
    table: str
    """The content table, relative to the store's table root (``"artifacts/data"``)."""
    schema_fields: Mapping[str, ColumnType]
    """The type's own columns, beyond :data:`COMMON_COLUMNS`."""
    builtin: bool = False
    """True for the four types stemma ships."""


# The built-in tables, as stemma.storage names them (plural, like the other tables).
_BUILTIN_TABLES = {
    "data": "artifacts/data",
    "metric": "artifacts/metrics",
    "config": "artifacts/configs",
    "file_ref": "artifacts/file_refs",
}

_RESERVED_TABLES = frozenset({"artifacts/index", *_BUILTIN_TABLES.values()})

_TYPES: dict[str, ArtifactType] = {
    key: ArtifactType(key=key, table=_BUILTIN_TABLES[key], schema_fields=fields, builtin=True)
    for key, fields in {
        "data": {"columns": ColumnType.STRING_LIST, "row_count": ColumnType.INT64},
        "metric": {},
        "config": {"references": ColumnType.STRING_LIST},
        "file_ref": {"path": ColumnType.STRING, "content_hash": ColumnType.STRING},
    }.items()
}


def register_artifact_type(
    key: str, table: str, schema_fields: Mapping[str, ColumnType | str]
) -> ArtifactType:
    """Register a user-defined artifact type with its own content table.

    Registering the same definition again (a re-imported module) is a no-op.

    Raises:
        ArtifactTypeError: the key or table is malformed, a field shadows a common column, or
            the key or table is already registered differently.
    """
    if not _KEY.match(key) or key == "any":
        raise ArtifactTypeError(
            f"artifact type key {key!r} must be lower case letters, digits and '_', not 'any'"
        )
    if not re.match(r"^artifacts/[a-z0-9_]+$", table) or table in _RESERVED_TABLES:
        raise ArtifactTypeError(
            f"artifact type {key!r}: table {table!r} must be 'artifacts/<name>' and not one of "
            f"stemma's own ({', '.join(sorted(_RESERVED_TABLES))})"
        )
    try:
        fields = {name: ColumnType(kind) for name, kind in schema_fields.items()}
    except ValueError as err:
        accepted = ", ".join(kind.value for kind in ColumnType)
        raise ArtifactTypeError(f"artifact type {key!r}: {err}; accepted: {accepted}") from err
    if shadowed := sorted(set(fields) & set(COMMON_COLUMNS)):
        raise ArtifactTypeError(
            f"artifact type {key!r}: schema_fields {shadowed} are common columns; rename them"
        )
    new = ArtifactType(key=key, table=table, schema_fields=fields)
    old = _TYPES.get(key)
    if old is not None and old != new:
        raise ArtifactTypeError(f"artifact type {key!r} is already registered as {old}")
    if clash := [t.key for t in _TYPES.values() if t.table == table and t.key != key]:
        raise ArtifactTypeError(f"artifact type {key!r}: table {table!r} belongs to {clash[0]!r}")
    _TYPES[key] = new
    return new


def get_artifact_type(key: str) -> ArtifactType:
    """Return the registered type ``key``.

    Raises:
        ArtifactTypeError: no such type; the message lists the registered ones.
    """
    try:
        return _TYPES[key]
    except KeyError:
        raise ArtifactTypeError(
            f"unknown artifact type {key!r}; registered: {', '.join(sorted(_TYPES))} "
            "(register yours with register_artifact_type before using it)"
        ) from None


def artifact_types() -> tuple[str, ...]:
    """The registered type keys, sorted."""
    return tuple(sorted(_TYPES))


def _check_type_key(value: str) -> str:
    if not _KEY.match(value):
        raise ValueError(
            f"artifact_type must be 'any' or a registered type key such as 'data' "
            f"(lower case letters, digits, '_'), got {value!r}"
        )
    return value


class InputSpec(BaseModel, frozen=True, extra="forbid"):
    """One input role of an operation."""

    artifact_type: str = "any"
    """The artifact type the role accepts; ``"any"`` accepts every type."""
    required: bool = True
    """Whether a step must bind this role."""
    materialize: bool = True
    """Whether a creator gets the artifacts written into its sandbox as files."""
    materialize_as: str | None = None
    """Extension to write materialized files with (``".pdb"``), instead of the artifact's own."""
    hydrate: bool = True
    """Whether the artifacts' content is loaded (False: ids and metadata only)."""
    with_associated: tuple[str, ...] = ()
    """Artifact types linked to these inputs by lineage to bring along."""

    _type = field_validator("artifact_type")(_check_type_key)

    @field_validator("materialize_as")
    @classmethod
    def _extension(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^\.[A-Za-z0-9_.-]+$", value):
            raise ValueError(
                f"materialize_as must be a file extension starting with '.', such as '.csv', "
                f"got {value!r}"
            )
        return value


UNDECLARED_INPUT = InputSpec()
"""The spec of an input role the operation does not declare (made once: building a model per
unit and role is not free on a hot path)."""


class OutputSpec(BaseModel, frozen=True, extra="forbid"):
    """One output role of an operation."""

    artifact_type: str = "any"
    """The artifact type the role produces; ``"any"`` allows every type."""
    required: bool = True
    """Whether a successful execution must report this role."""
    infer_lineage_from: Mapping[LineageSource, Sequence[str]] | None = None
    """Where each output's parents are found by stem matching: ``{"inputs": [roles]}``,
    ``{"outputs": [roles]}``, or ``{"inputs": []}`` for outputs generated from nothing.
    Creators must set it on every output."""

    _type = field_validator("artifact_type")(_check_type_key)

    @field_validator("infer_lineage_from", mode="before")
    @classmethod
    def _lineage(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, dict) or len(value) != 1:  # pyright: ignore[reportUnknownArgumentType]
            raise ValueError(
                'infer_lineage_from must be a dict with one key, {"inputs": [roles]} or '
                f'{{"outputs": [roles]}}, got {value!r}'
            )
        ((source, roles),) = value.items()  # pyright: ignore[reportUnknownVariableType]
        if source not in ("inputs", "outputs"):
            raise ValueError(f'infer_lineage_from keys are "inputs" or "outputs", got {source!r}')
        if isinstance(roles, str) or not isinstance(roles, list | tuple):
            raise ValueError(
                f"infer_lineage_from[{source!r}] must be a list of role names, got {roles!r}"
            )
        if source == "outputs" and not roles:
            raise ValueError(
                'infer_lineage_from {"outputs": []} names no role; list the output roles '
                'to match against, or use {"inputs": []} for outputs generated from nothing'
            )
        return value  # pyright: ignore[reportUnknownVariableType]

    @property
    def lineage_source(self) -> LineageSource | None:
        """``"inputs"`` or ``"outputs"``; None when lineage is not inferred."""
        return next(iter(self.infer_lineage_from), None) if self.infer_lineage_from else None

    @property
    def lineage_roles(self) -> tuple[str, ...]:
        """The roles stem matching looks in (empty: generated from nothing, or not inferred)."""
        return (
            tuple(next(iter(self.infer_lineage_from.values()))) if self.infer_lineage_from else ()
        )


class Resources(BaseModel, frozen=True, extra="forbid"):
    """What one worker asks of its machine. Never part of a key."""

    cpus: int = Field(default=1, ge=1)
    """CPU cores per worker."""
    memory_gb: float = Field(default=4.0, gt=0)
    """Memory per worker, in GB."""
    gpus: int = Field(default=0, ge=0)
    """GPUs per worker; local GPU operations run one at a time."""
    time_limit: str = "01:00:00"
    """Wall-clock limit in SLURM form: ``MM``, ``HH:MM:SS``, ``D-HH:MM`` or ``D-HH:MM:SS``."""
    partition: str | None = None
    """The SLURM partition to run on; None for the cluster's default."""
    extra: dict[str, str] = Field(default_factory=dict[str, str])
    """Backend-specific options passed through as given (``{"account": "lab"}``)."""

    @field_validator("time_limit")
    @classmethod
    def _time_limit(cls, value: str) -> str:
        if not _TIME_LIMIT.match(value):
            raise ValueError(
                f"time_limit must look like 'MM', 'HH:MM:SS' or 'D-HH:MM:SS', got {value!r}"
            )
        return value


class Execution(BaseModel, frozen=True, extra="forbid"):
    """How a step's work is cut into units and spread over workers. Never part of a key."""

    artifacts_per_unit: int = Field(default=1, ge=1)
    """Level 1 batching: how many artifacts one execution unit should hold (a target: paired
    groups are never split, so a unit grows to the end of its last group)."""
    max_artifacts_per_unit: int | None = Field(default=None, ge=1)
    """Hard cap on one unit's artifacts; None for no cap."""
    units_per_worker: int | None = Field(default=None, ge=1)
    """Level 2 batching: how many units one worker (one SLURM array element) runs in turn and
    stages as one bundle. None (the default): the local backend sizes packs as they come back,
    about half a second of work each, so many tiny units cost few bundles; a backend that queues
    whole waves (SLURM arrays) sizes its elements from the step's recorded seconds per unit
    (``element_seconds`` of work each; ``stemma.core.engine.dispatch.wave_sizing``)."""
    element_seconds: float = Field(default=DEFAULT_ELEMENT_SECONDS, gt=0)
    """With ``units_per_worker`` unset, the work one SLURM array element aims at, in seconds
    (three minutes by default): more units per element for short units, never more than half
    the time limit of work."""
    max_workers: int | None = Field(default=None, ge=1)
    """At most this many workers at once for the step; None for the backend's default."""
    job_name: str | None = None
    """Scheduler job name prefix; None for the operation's name."""

    @model_validator(mode="after")
    def _ceiling(self) -> Execution:
        ceiling = self.max_artifacts_per_unit
        if ceiling is not None and ceiling < self.artifacts_per_unit:
            raise ValueError(
                f"max_artifacts_per_unit ({ceiling}) is below artifacts_per_unit "
                f"({self.artifacts_per_unit}); raise it or leave it unset"
            )
        return self


def describe_validation_error(err: ValidationError, accepted: Mapping[str, list[str]]) -> str:
    """One line for every problem in ``err``, each naming its field and what is accepted.

    Args:
        err: what pydantic raised.
        accepted: ``{section: [accepted keys]}`` for the sections that forbid unknown keys.
    """
    problems: list[str] = []
    for error in err.errors():
        loc = [str(part) for part in error["loc"]]
        section = loc[0] if loc else ""
        if error["type"] == "extra_forbidden" and len(loc) == 2 and section in accepted:
            keys = ", ".join(accepted[section]) or "(none)"
            problems.append(f"unknown {section} key {loc[1]!r}; accepted: {keys}")
        else:
            message = error["msg"].removeprefix("Value error, ")
            problems.append(f"{'.'.join(loc)}: {message} (got {error['input']!r})")
    return "; ".join(problems)
