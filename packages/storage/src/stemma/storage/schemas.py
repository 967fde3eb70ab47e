"""Every Delta table's schema, declared once as an explicit Arrow schema and never inferred.

pyarrow is reached only through ``_pa`` in this module; the rest of the package works with polars
frames and converts them here, at the one place that knows the declared schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import polars as pl
import pyarrow

_pa: Any = pyarrow  # untyped library: confined to this module

_UTC_MICROS: Any = _pa.timestamp("us", tz="UTC")


def _field(name: str, kind: Any, *, nullable: bool = True) -> Any:
    return _pa.field(name, kind, nullable=nullable)


def _required(name: str) -> Any:
    return _field(name, _pa.string(), nullable=False)


def _text(name: str) -> Any:
    return _field(name, _pa.string())


@dataclass(frozen=True, eq=False)
class TableSpec:
    """One Delta table: where it lives under ``{root}/delta`` and its declared schema."""

    name: str
    """The table's path under the Delta root, such as ``artifacts/index``."""
    arrow_schema: Any
    """The explicit ``pyarrow.Schema`` every write is cast to."""
    key: str | None = None
    """The column rows are deduplicated by (``artifact_id`` for artifact tables), if any."""

    @property
    def staged_name(self) -> str:
        """The file this table's rows are staged in: such as ``steps.parquet``."""
        return f"{self.name.rsplit('/', 1)[-1]}.parquet"

    @cached_property
    def columns(self) -> tuple[str, ...]:
        """The column names, in declared order."""
        return tuple(cast(list[str], self.arrow_schema.names))

    @cached_property
    def polars_schema(self) -> pl.Schema:
        """The declared schema in polars terms, for building and reading frames."""
        table = self.arrow_schema.empty_table()
        return cast(pl.DataFrame, pl.from_arrow(table)).schema  # pyright: ignore[reportUnknownMemberType]

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
        table = cast(Any, frame.select(self.columns).to_arrow())
        return table.cast(self.arrow_schema)


ARTIFACT_INDEX = TableSpec(
    "artifacts/index",
    _pa.schema(
        [
            _required("artifact_id"),
            _required("artifact_type"),
            _text("origin_step_run_id"),
            _text("origin_step_name"),
            _field("created_at", _UTC_MICROS, nullable=False),
            _text("metadata"),
        ]
    ),
    key="artifact_id",
)
METRICS = TableSpec(
    "artifacts/metrics",
    _pa.schema([_required("artifact_id"), _required("content"), _text("origin_step_name")]),
    key="artifact_id",
)
FILE_REFS = TableSpec(
    "artifacts/file_refs",
    _pa.schema(
        [
            _required("artifact_id"),
            _required("path"),
            _required("content_hash"),
            _field("size", _pa.int64(), nullable=False),
            _field("file_count", _pa.int64(), nullable=False),
            _text("origin_step_name"),
        ]
    ),
    key="artifact_id",
)
ARTIFACT_EDGES = TableSpec(
    "provenance/artifact_edges",
    _pa.schema(
        [
            _required("execution_run_id"),
            _required("source_artifact_id"),
            _required("target_artifact_id"),
            _text("source_artifact_type"),
            _text("target_artifact_type"),
            _text("source_role"),
            _text("target_role"),
            _text("group_id"),
            _field("step_boundary", _pa.bool_(), nullable=False),
        ]
    ),
)
EXECUTION_EDGES = TableSpec(
    "provenance/execution_edges",
    _pa.schema(
        [
            _required("execution_run_id"),
            _required("direction"),
            _required("role"),
            _required("artifact_id"),
        ]
    ),
)
EXECUTIONS = TableSpec(
    "orchestration/executions",
    _pa.schema(
        [
            _required("execution_run_id"),
            _required("execution_spec_id"),
            _required("step_run_id"),
            _required("step_spec_id"),
            _required("step_name"),
            _field("step_number", _pa.int64(), nullable=False),
            _text("operation"),
            _text("version"),
            _text("params"),
            _field("started_at", _UTC_MICROS),
            _field("ended_at", _UTC_MICROS),
            _text("worker"),
            _text("backend"),
            _field("success", _pa.bool_(), nullable=False),
            _text("error"),
            _text("tool_output"),
            _text("worker_log"),
            _text("provenance"),
            _text("metadata"),
        ]
    ),
)
STEPS = TableSpec(
    "orchestration/steps",
    _pa.schema(
        [
            _required("step_run_id"),
            _required("step_spec_id"),
            _required("pipeline_run_id"),
            _field("step_number", _pa.int64(), nullable=False),
            _required("step_name"),
            _required("status"),
            _text("operation"),
            _text("version"),
            _text("params"),
            _field("dep_fingerprints", _pa.list_(_pa.string())),
            _text("backend"),
            _field("output_roles", _pa.list_(_pa.string())),
            _field("total_count", _pa.int64()),
            _field("succeeded_count", _pa.int64()),
            _field("failed_count", _pa.int64()),
            _field("timestamp", _UTC_MICROS, nullable=False),
            _field("duration_seconds", _pa.float64()),
            _text("error"),
            _text("dispatch_error"),
            _text("commit_error"),
            _text("metadata"),
        ]
    ),
)

COMMIT_ORDER: tuple[TableSpec, ...] = (
    METRICS,
    FILE_REFS,
    ARTIFACT_INDEX,
    ARTIFACT_EDGES,
    EXECUTION_EDGES,
    STEPS,
    EXECUTIONS,
)
"""Content, index, provenance, the step event, and the execution row last: a reader that sees an
execution row sees everything it refers to."""
