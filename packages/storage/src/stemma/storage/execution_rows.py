"""Pipeline records to table rows, and back: pure functions, no I/O.

An :class:`ExecutionRecord` becomes rows of its artifacts' content tables, the index, artifact
edges, execution edges and one execution row; a :class:`StepEvent` one steps row; a
:class:`StepOutputs` one row per (role, artifact). The reverse functions rebuild the records the
queries return. A function step is one unit like any other: its output a ``file_ref``, its
return value a ``metric``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import polars as pl

from stemma.core.canonical import dumps_plain
from stemma.core.execution_records import ExecutionRecord, StepEvent, StepOutputs
from stemma.core.records import StepStatus
from stemma.core.store import record_rows
from stemma.core.store.record_rows import RowFormat
from stemma.storage.artifact_tables import content_row, table_for_type
from stemma.storage.schemas import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    STEP_OUTPUTS,
    STEPS,
    TableSpec,
)


def execution_frames(records: Sequence[ExecutionRecord]) -> dict[TableSpec, pl.DataFrame]:
    """Every row these execution units add, per table (tables with no rows are left out).

    One frame per table for the whole pack: building a frame costs far more than adding rows.

    Raises:
        ArtifactTypeError: an artifact's type is not registered in this process.
    """
    rows: dict[TableSpec, list[dict[str, Any]]] = {EXECUTIONS: []}
    for record in records:
        _add_rows(rows, record)
    return {spec: spec.frame(found) for spec, found in rows.items()}


def _add_rows(rows: dict[TableSpec, list[dict[str, Any]]], record: ExecutionRecord) -> None:
    rows[EXECUTIONS].append(execution_row(record))
    types: dict[str, str] = {}
    for artifact in record.artifacts:
        spec = table_for_type(artifact.artifact_type)
        types[artifact.artifact_id] = artifact.artifact_type
        rows.setdefault(spec, []).append(
            content_row(spec, artifact, record.step_name, record.step_number)
        )
        rows.setdefault(ARTIFACT_INDEX, []).append(
            {
                "artifact_id": artifact.artifact_id,
                "artifact_type": artifact.artifact_type,
                "origin_step_run_id": record.step_run_id,
                "origin_step_name": record.step_name,
                "origin_step": record.step_number,
                "created_at": record.ended_at,
                "metadata": dumps_plain(dict(artifact.metadata)),
            }
        )
    for edge in record.edges:
        rows.setdefault(ARTIFACT_EDGES, []).append(
            {
                "execution_run_id": record.execution_run_id,
                "source_artifact_id": edge.source_artifact_id,
                "target_artifact_id": edge.target_artifact_id,
                "source_artifact_type": edge.source_artifact_type
                or types.get(edge.source_artifact_id),
                "target_artifact_type": edge.target_artifact_type
                or types.get(edge.target_artifact_id),
                "source_role": edge.source_role,
                "target_role": edge.target_role,
                "group_id": edge.group_id,
                "step_boundary": edge.step_boundary,
            }
        )
    for direction, by_role in (("input", record.inputs), ("output", record.outputs)):
        for role, artifact_ids in by_role.items():
            for position, artifact_id in enumerate(artifact_ids):
                rows.setdefault(EXECUTION_EDGES, []).append(
                    {
                        "execution_run_id": record.execution_run_id,
                        "direction": direction,
                        "role": role,
                        "artifact_id": artifact_id,
                        "position": position,
                    }
                )


def execution_row(record: ExecutionRecord) -> dict[str, Any]:
    """The ``orchestration/executions`` row of one unit."""
    return {
        "execution_run_id": record.execution_run_id,
        "execution_spec_id": record.execution_spec_id,
        "step_run_id": record.step_run_id,
        "step_spec_id": record.step_spec_id,
        "step_name": record.step_name,
        "step_number": record.step_number,
        "operation": record.operation,
        "version": record.version,
        "params": dumps_plain(dict(record.params)),
        "overrides": dumps_plain(dict(record.overrides)),
        "started_at": record.started_at,
        "ended_at": record.ended_at,
        "worker": record.worker,
        "backend": record.backend,
        "success": record.success,
        "error": record.error,
        "tool_output": record.tool_output,
        "worker_log": record.worker_log,
        "provenance": dumps_plain(dict(record.provenance)) if record.provenance else None,
        "metadata": dumps_plain(dict(record.metadata)),
    }


def event_row(event: StepEvent) -> dict[str, Any]:
    """The ``orchestration/steps`` row of one step event."""
    return {
        "step_run_id": event.step_run_id,
        "step_spec_id": event.step_spec_id,
        "pipeline_run_id": event.pipeline_run_id,
        "step_number": event.step_number,
        "step_name": event.step_name,
        "status": StepStatus(event.status).value,
        "operation": event.operation,
        "version": event.version,
        "params": dumps_plain(dict(event.params)),
        "dep_fingerprints": list(event.dep_fingerprints),
        "backend": event.backend,
        "output_roles": list(event.output_roles),
        "total_count": event.total_count,
        "succeeded_count": event.succeeded_count,
        "failed_count": event.failed_count,
        "timestamp": event.timestamp,
        "duration_seconds": event.duration_seconds,
        "error": event.error,
        "dispatch_error": event.dispatch_error,
        "commit_error": event.commit_error,
        "metadata": dumps_plain(dict(event.metadata)),
    }


def step_outputs_frame(outputs: StepOutputs) -> pl.DataFrame:
    """The ``orchestration/step_outputs`` rows of one step run (an empty role: a null id)."""
    roles: list[str] = []
    ids: list[str | None] = []
    for role, artifact_ids in outputs.outputs.items():
        # (already sorted and unique, as StepOutputs promises; checked without a copy)
        ordered = all(a < b for a, b in pairwise(artifact_ids))
        unique = artifact_ids if ordered else sorted(set(artifact_ids))
        roles.extend([role] * max(1, len(unique)))
        ids.extend(unique or [None])
    columns = {"step_run_id": [outputs.step_run_id] * len(ids), "role": roles, "artifact_id": ids}
    return pl.DataFrame(columns, schema=STEP_OUTPUTS.polars_schema)


def event_frame(events: list[StepEvent]) -> pl.DataFrame:
    """Steps rows of ``events``, in order."""
    return STEPS.frame([event_row(event) for event in events])


def _utc(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.UTC)


DELTA_ROWS = RowFormat(time=_utc, strings=lambda value: value or ())
"""How Delta rows hold times (timestamps, read back in UTC) and lists (lists)."""


def execution_from_row(
    row: Mapping[str, Any], edges: Mapping[str, Mapping[str, tuple[str, ...]]]
) -> ExecutionRecord:
    """An ``executions`` row read back, with its ``{"input"|"output": {role: ids}}`` edges."""
    return record_rows.execution_from_row(row, edges, DELTA_ROWS)


def event_from_row(row: Mapping[str, Any]) -> StepEvent:
    """A ``steps`` row read back as a :class:`StepEvent`."""
    return record_rows.event_from_row(row, DELTA_ROWS)
