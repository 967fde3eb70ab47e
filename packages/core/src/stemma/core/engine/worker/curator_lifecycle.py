"""The curator lifecycle: ``execute_curator`` over one DataFrame per input role, no sandbox.

Each frame has one row per input artifact with ``artifact_id``, ``original_name`` and
``artifact_type``; metric artifacts add their values as columns when they are scalars of one
type across the frame (ints and floats together become floats). A passthrough result names
existing artifacts and creates none; an artifact result is settled like a creator's.
"""

from __future__ import annotations

import dataclasses
import json
import resource
import shutil
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from stemma.core.backends.base import IN_PROCESS_BACKENDS
from stemma.core.engine.worker.creator_lifecycle import (
    LifecycleOutcome,
    failure_outcome,
    settle_result,
)
from stemma.core.engine.worker.output_capture import capture_output
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.operations.results import validate_result
from stemma.core.store.failure_logs import tail_lines
from stemma.core.store.protocols import WorkerStore
from stemma.core.temp_dirs import owned_temp_dir

BASE_COLUMNS: tuple[str, ...] = ("artifact_id", "original_name", "artifact_type")
"""The columns every curator input frame has."""
_DTYPES: dict[type, type[pl.DataType]] = {
    bool: pl.Boolean,
    int: pl.Int64,
    float: pl.Float64,
    str: pl.String,
}


def run_curator(
    unit: ExecutionUnit,
    inputs: Mapping[str, Sequence[FinalizedArtifact]],
    store: WorkerStore,
    *,
    associated: Mapping[str, Mapping[str, Mapping[str, list[FinalizedArtifact]]]] | None = None,
) -> LifecycleOutcome:
    """Run a curator over frames of the unit's inputs; never raises (a failure is an outcome).

    Args:
        unit: the unit; its operation is a curator.
        inputs: ``{role: [artifacts]}`` of the unit, with content for metrics (unless the role
            does not hydrate).
        store: handed to ``execute_curator`` for walking lineage.
        associated: per role, per input id, the artifacts its ``with_associated`` asked for;
            each type becomes an ``associated_{type}`` column of id lists.
    """
    op = unit.operation
    scratch = owned_temp_dir("curator")  # (a killed curator's: swept by the next)
    try:
        log_path = scratch / "tool_output.log"
        try:
            frames = {
                role: _with_associated(input_frame(artifacts), (associated or {}).get(role))
                for role, artifacts in inputs.items()
            }
            with capture_output(log_path) as captured:
                result = op.execute_curator(frames, unit.step_number, store)
            validated = validate_result(op, result)
            outcome = settle_result(unit, validated, inputs, tool_output=captured.tail)
        except (Exception, SystemExit) as err:
            outcome = failure_outcome(err, tail_lines(log_path))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _with_peak_memory(unit, outcome)


def _with_peak_memory(unit: ExecutionUnit, outcome: LifecycleOutcome) -> LifecycleOutcome:
    """Record the curator's process's peak memory (``metadata.peak_rss_mb``).

    A curator runs in a process of its step's own (``engine/dispatch/curator_workers.py``), so the
    process's peak is the curator's. Not under ``local-thread``: that would be the
    orchestrator's.
    """
    if unit.backend in IN_PROCESS_BACKENDS:
        return outcome
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return dataclasses.replace(
        outcome, metadata={**outcome.metadata, "peak_rss_mb": round(peak_mb, 1)}
    )


def input_frame(artifacts: Sequence[FinalizedArtifact]) -> pl.DataFrame:
    """One curator input frame: a row per artifact, metric values as columns when simple."""
    columns: dict[str, list[Any]] = {name: [] for name in BASE_COLUMNS}
    values: list[dict[str, Any]] = []
    for artifact in artifacts:
        columns["artifact_id"].append(artifact.artifact_id)
        columns["original_name"].append(artifact.original_name)
        columns["artifact_type"].append(artifact.artifact_type)
        values.append(_metric_values(artifact))
    schema: dict[str, type[pl.DataType]] = dict.fromkeys(BASE_COLUMNS, pl.String)
    for key in sorted({key for row in values for key in row} - set(BASE_COLUMNS)):
        column = [row.get(key) for row in values]
        dtype = _common_dtype(column)
        if dtype is not None:
            columns[key] = [
                float(v) if dtype is pl.Float64 and v is not None else v for v in column
            ]
            schema[key] = dtype
    return pl.DataFrame(columns, schema=schema)


def _with_associated(
    frame: pl.DataFrame, found: Mapping[str, Mapping[str, list[FinalizedArtifact]]] | None
) -> pl.DataFrame:
    if not found:
        return frame
    kinds = sorted({kind for types in found.values() for kind in types})
    ids = frame.get_column("artifact_id").to_list()
    return frame.with_columns(
        pl.Series(
            f"associated_{kind}",
            [[a.artifact_id for a in found.get(i, {}).get(kind, [])] for i in ids],
            dtype=pl.List(pl.String),
        )
        for kind in kinds
    )


def _metric_values(artifact: FinalizedArtifact) -> dict[str, Any]:
    if artifact.artifact_type != "metric" or artifact.content is None:
        return {}
    try:
        decoded = json.loads(artifact.content)
    except (ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(decoded, dict):
        return {}
    content: dict[str, Any] = decoded  # pyright: ignore[reportUnknownVariableType]
    return content


def _common_dtype(column: Sequence[Any]) -> type[pl.DataType] | None:
    """The one dtype of a column of scalars (None: not simple, or of mixed types)."""
    kinds: set[type[Any]] = {type(value) for value in column if value is not None}
    if kinds == {int, float}:
        return pl.Float64
    if len(kinds) != 1:
        return None
    (kind,) = kinds
    return _DTYPES.get(kind)
