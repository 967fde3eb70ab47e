"""Rows of the ``executions`` and ``steps`` tables read back as records, for every store.

The SQLite store (core) and the Delta store (stemma-storage) keep the same columns; they differ
only in how a row holds a time (microseconds, or a timestamp) and a list (JSON text, or a list).
Each passes its :class:`RowFormat`, and one reader serves both, so a field added to a record
is read back the same way everywhere.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from stemma.core.execution_records import ExecutionRecord, StepEvent
from stemma.core.records import StepStatus


@dataclass(frozen=True, kw_only=True)
class RowFormat:
    """How one store's rows hold what a record's fields need converting."""

    time: Callable[[Any], dt.datetime]
    """A time column to an aware UTC datetime."""
    strings: Callable[[Any], Iterable[str]]
    """A list-of-strings column (None: empty)."""


def json_object(text: str | None) -> dict[str, Any]:
    """A JSON object column read back (``{}`` when empty)."""
    return cast(dict[str, Any], json.loads(text)) if text else {}


def execution_from_row(
    row: Mapping[str, Any],
    edges: Mapping[str, Mapping[str, tuple[str, ...]]],
    form: RowFormat,
) -> ExecutionRecord:
    """An ``executions`` row read back, with its ``{"input"|"output": {role: ids}}`` edges."""
    return ExecutionRecord(
        execution_run_id=row["execution_run_id"],
        execution_spec_id=row["execution_spec_id"],
        step_run_id=row["step_run_id"],
        step_spec_id=row["step_spec_id"],
        step_name=row["step_name"],
        step_number=row["step_number"],
        operation=row["operation"] or "",
        version=row["version"] or "",
        params=json_object(row["params"]),
        overrides=json_object(row["overrides"]),
        started_at=form.time(row["started_at"]),
        ended_at=form.time(row["ended_at"]),
        worker=row["worker"] or "",
        backend=row["backend"] or "",
        success=bool(row["success"]),
        error=row["error"],
        tool_output=row["tool_output"],
        worker_log=row["worker_log"],
        inputs=dict(edges.get("input", {})),
        outputs=dict(edges.get("output", {})),
        metadata=json_object(row["metadata"]),
        provenance=json_object(row["provenance"]),
    )


def event_from_row(row: Mapping[str, Any], form: RowFormat) -> StepEvent:
    """A ``steps`` row read back as a :class:`StepEvent`."""
    return StepEvent(
        step_run_id=row["step_run_id"],
        step_spec_id=row["step_spec_id"],
        pipeline_run_id=row["pipeline_run_id"],
        step_number=row["step_number"],
        step_name=row["step_name"],
        status=StepStatus(row["status"]),
        operation=row["operation"] or "",
        version=row["version"] or "",
        params=json_object(row["params"]),
        backend=row["backend"] or "",
        timestamp=form.time(row["timestamp"]),
        dep_fingerprints=tuple(form.strings(row["dep_fingerprints"])),
        output_roles=tuple(form.strings(row["output_roles"])),
        total_count=row["total_count"] or 0,
        succeeded_count=row["succeeded_count"] or 0,
        failed_count=row["failed_count"] or 0,
        duration_seconds=row["duration_seconds"],
        error=row["error"],
        dispatch_error=row["dispatch_error"],
        commit_error=row["commit_error"],
        metadata=json_object(row["metadata"]),
    )
