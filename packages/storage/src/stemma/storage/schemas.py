"""Every Delta table's schema, declared once as explicit column types and never inferred.

Columns are declared here in plain terms (:class:`Column`); the ``pyarrow.Schema`` every write
is cast to is built from them on first use (pyarrow is imported there alone). A worker
process that only stages (polars frames written as Parquet) never imports pyarrow: it is a
fifth of a worker's start-up imports (issue 19).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Literal, cast, get_args

import polars as pl

ColumnKind = Literal["string", "int64", "float64", "bool", "binary", "list<string>", "timestamp"]
"""A column's type: ``timestamp`` is microseconds in UTC; ``list<string>`` a list of strings."""


@dataclass(frozen=True)
class Column:
    """One declared column."""

    name: str
    kind: ColumnKind
    nullable: bool = True


def _required(name: str) -> Column:
    return Column(name, "string", nullable=False)


def _text(name: str) -> Column:
    return Column(name, "string")


def _int(name: str, *, nullable: bool = True) -> Column:
    return Column(name, "int64", nullable=nullable)


_POLARS_TYPES: dict[ColumnKind, pl.DataType] = {
    "string": pl.String(),
    "int64": pl.Int64(),
    "float64": pl.Float64(),
    "bool": pl.Boolean(),
    "binary": pl.Binary(),
    "list<string>": pl.List(pl.String()),
    "timestamp": pl.Datetime("us", "UTC"),
}
_USER_COLUMN_TYPES: dict[str, ColumnKind] = {
    **{kind: kind for kind in get_args(ColumnKind) if kind != "timestamp"},
    "json": "string",  # canonical JSON text
}
"""The column types a user-registered artifact type may declare, and how each is stored."""


@cache
def _pa() -> Any:
    """The pyarrow module (~0.15 s to import: only to write or create a table, never to stage)."""
    import pyarrow

    return pyarrow  # untyped library: confined to this module


def _arrow_type(kind: ColumnKind) -> Any:
    pa = _pa()
    if kind == "list<string>":
        return pa.list_(pa.string())
    if kind == "timestamp":
        return pa.timestamp("us", tz="UTC")
    return getattr(pa, "bool_" if kind == "bool" else kind)()


@dataclass(frozen=True, eq=False)
class TableSpec:
    """One Delta table: where it lives under ``{root}/delta`` and its declared schema."""

    name: str
    """The table's path under the Delta root, such as ``artifacts/index``."""
    fields: tuple[Column, ...]
    """Its columns, in declared order."""
    key: str | None = None
    """The column rows are deduplicated by (``artifact_id`` for artifact tables), if any."""
    phase: int = 0
    """Where the table comes in a commit: content (0), index, provenance, step outputs, steps,
    executions (6); see :func:`commit_order`."""
    user_fields: tuple[tuple[str, str], ...] | None = None
    """For a user type's content table, its ``(field, column type)`` pairs; else None."""

    @property
    def staged_name(self) -> str:
        """The file this table's rows are staged in: such as ``steps.parquet``.

        User content tables are staged under their full dotted name
        (``artifacts.structures.parquet``), so they never collide with a built-in table's file.
        """
        if self.user_fields is not None:
            return f"{self.name.replace('/', '.')}.parquet"
        return f"{self.name.rsplit('/', 1)[-1]}.parquet"

    @cached_property
    def columns(self) -> tuple[str, ...]:
        """The column names, in declared order."""
        return tuple(column.name for column in self.fields)

    @cached_property
    def arrow_schema(self) -> Any:
        """The explicit ``pyarrow.Schema`` every write is cast to (nullability included)."""
        pa = _pa()
        return pa.schema(
            [pa.field(c.name, _arrow_type(c.kind), nullable=c.nullable) for c in self.fields]
        )

    @cached_property
    def polars_schema(self) -> pl.Schema:
        """The declared schema in polars terms, for building and reading frames."""
        return pl.Schema([(column.name, _POLARS_TYPES[column.kind]) for column in self.fields])

    def path(self, delta_root: Path) -> Path:
        """The table's directory under ``delta_root``."""
        return delta_root / self.name

    def empty(self) -> pl.DataFrame:
        """A frame with this table's columns and no rows."""
        return pl.DataFrame(schema=self.polars_schema)

    def frame(self, rows: list[dict[str, Any]]) -> pl.DataFrame:
        """Rows as a frame of exactly this table's schema."""
        return pl.DataFrame(rows, schema=self.polars_schema, orient="row")

    def to_arrow(self, frame: pl.DataFrame) -> Any:
        """``frame`` as a ``pyarrow.Table`` cast to the declared schema (nullability included)."""
        # Large (offset) strings cast to the declared ones far faster than string views do.
        oldest = pl.CompatLevel.oldest()
        table = cast(Any, frame.select(self.columns).to_arrow(compat_level=oldest))
        return table.cast(self.arrow_schema)


def _content_table(
    name: str,
    content: Literal["binary", "text", "none"],
    fields: Iterable[Column],
    user_fields: tuple[tuple[str, str], ...] | None = None,
) -> TableSpec:
    """A content table: the common artifact columns, then the type's own ``fields``."""
    leading = [_required("artifact_id")]
    if content != "none":
        leading.append(Column("content", "binary" if content == "binary" else "string"))
    common = [
        _text("original_name"),
        _text("extension"),
        _int("size"),
        _int("origin_step"),
        _text("origin_step_name"),
        _text("metadata"),
    ]
    columns = (*leading, *common, *fields)
    return TableSpec(name, columns, key="artifact_id", phase=0, user_fields=user_fields)


@cache
def user_content_table(name: str, fields: tuple[tuple[str, str], ...]) -> TableSpec:
    """The content table of a user-registered artifact type: binary content plus its fields.

    Built from the type's ``(field, column type)`` pairs alone, so a bundle staged by another
    process rebuilds the same spec without the type being registered here.

    Raises:
        ValueError: ``name`` is one of stemma's own tables, or a column type is unknown.
    """
    if name in _RESERVED:
        raise ValueError(f"table {name!r} is one of stemma's own tables; register another one")
    unknown = sorted(kind for _, kind in fields if kind not in _USER_COLUMN_TYPES)
    if unknown:
        raise ValueError(f"table {name!r}: unknown column types {unknown}")
    columns = [Column(field, _USER_COLUMN_TYPES[kind]) for field, kind in fields]
    return _content_table(name, "binary", columns, user_fields=fields)


DATA = _content_table(
    "artifacts/data", "binary", [Column("columns", "list<string>"), _int("row_count")]
)
METRICS = _content_table("artifacts/metrics", "text", [])
"""Metric content is canonical JSON, kept as text so that it reads back as it was written."""
CONFIGS = _content_table("artifacts/configs", "binary", [Column("references", "list<string>")])
FILE_REFS = _content_table(
    "artifacts/file_refs", "none", [_text("path"), _text("content_hash"), _int("file_count")]
)
ARTIFACT_INDEX = TableSpec(
    "artifacts/index",
    (
        _required("artifact_id"),
        _required("artifact_type"),
        _text("origin_step_run_id"),
        _text("origin_step_name"),
        _int("origin_step"),
        Column("created_at", "timestamp", nullable=False),
        _text("metadata"),
    ),
    key="artifact_id",
    phase=1,
)
ARTIFACT_EDGES = TableSpec(
    "provenance/artifact_edges",
    (
        _required("execution_run_id"),
        _required("source_artifact_id"),
        _required("target_artifact_id"),
        _text("source_artifact_type"),
        _text("target_artifact_type"),
        _text("source_role"),
        _text("target_role"),
        _text("group_id"),
        Column("step_boundary", "bool", nullable=False),
    ),
    phase=2,
)
EXECUTION_EDGES = TableSpec(
    "provenance/execution_edges",
    (
        _required("execution_run_id"),
        _required("direction"),
        _required("role"),
        _required("artifact_id"),
        _int("position"),
    ),
    phase=3,
)
STEP_OUTPUTS = TableSpec(
    "orchestration/step_outputs",
    (_required("step_run_id"), _required("role"), _text("artifact_id")),
    phase=4,
)
"""What a step run offers downstream; a role with no artifacts is one row with a null id."""
STEPS = TableSpec(
    "orchestration/steps",
    (
        _required("step_run_id"),
        _required("step_spec_id"),
        _required("pipeline_run_id"),
        _int("step_number", nullable=False),
        _required("step_name"),
        _required("status"),
        _text("operation"),
        _text("version"),
        _text("params"),
        Column("dep_fingerprints", "list<string>"),
        _text("backend"),
        Column("output_roles", "list<string>"),
        _int("total_count"),
        _int("succeeded_count"),
        _int("failed_count"),
        Column("timestamp", "timestamp", nullable=False),
        Column("duration_seconds", "float64"),
        _text("error"),
        _text("dispatch_error"),
        _text("commit_error"),
        _text("metadata"),
    ),
    phase=5,
)
EXECUTIONS = TableSpec(
    "orchestration/executions",
    (
        _required("execution_run_id"),
        _required("execution_spec_id"),
        _required("step_run_id"),
        _required("step_spec_id"),
        _required("step_name"),
        _int("step_number", nullable=False),
        _text("operation"),
        _text("version"),
        _text("params"),
        _text("overrides"),
        Column("started_at", "timestamp"),
        Column("ended_at", "timestamp"),
        _text("worker"),
        _text("backend"),
        Column("success", "bool", nullable=False),
        _text("error"),
        _text("tool_output"),
        _text("worker_log"),
        _text("provenance"),
        _text("metadata"),
    ),
    phase=6,
)

COMMIT_ORDER: tuple[TableSpec, ...] = (
    DATA,
    METRICS,
    CONFIGS,
    FILE_REFS,
    ARTIFACT_INDEX,
    ARTIFACT_EDGES,
    EXECUTION_EDGES,
    STEP_OUTPUTS,
    STEPS,
    EXECUTIONS,
)
"""stemma's own tables in commit order: content, index, provenance, step outputs, the step event,
and the execution rows last, so a reader that sees an execution row sees everything it refers to.
User content tables come with the built-in ones (:func:`commit_order`)."""
BY_NAME: Mapping[str, TableSpec] = {spec.name: spec for spec in COMMIT_ORDER}
_RESERVED = frozenset(BY_NAME)


def commit_order(specs: Iterable[TableSpec]) -> list[TableSpec]:
    """``specs`` in commit order: by phase, then by name (user content tables included)."""
    return sorted(set(specs), key=lambda spec: (spec.phase, spec.name))
