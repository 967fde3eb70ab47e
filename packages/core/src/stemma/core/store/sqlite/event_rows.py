"""Step events to ``steps`` rows and back, and the step records function steps are cached by.

Pure functions, no I/O. A ``completed`` event of a function step carries its ``OUT`` and its
return value in its ``metadata``: ``output_path`` and ``output_artifact_id``, and
``value_artifact_id``, the metric artifact whose content is the value's canonical JSON. A
:class:`~stemma.core.records.StepRecord` is that event with the value looked up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stemma.core.canonical import dumps_plain
from stemma.core.execution_records import StepEvent
from stemma.core.records import StepRecord, StepStatus
from stemma.core.store.record_rows import json_object
from stemma.core.store.sqlite.execution_rows import from_micros, to_micros


def event_row(event: StepEvent) -> tuple[Any, ...]:
    """The ``steps`` row of one event, in :data:`~stemma.core.store.sqlite.schema.STEP_COLUMNS`."""
    return (
        event.step_run_id,
        event.step_spec_id,
        event.pipeline_run_id,
        event.step_number,
        event.step_name,
        StepStatus(event.status).value,
        event.operation,
        event.version,
        dumps_plain(dict(event.params)),
        dumps_plain(list(event.dep_fingerprints)),
        event.backend,
        dumps_plain(list(event.output_roles)),
        event.total_count,
        event.succeeded_count,
        event.failed_count,
        to_micros(event.timestamp),
        event.duration_seconds,
        event.error,
        event.dispatch_error,
        event.commit_error,
        dumps_plain(dict(event.metadata)),
    )


def value_artifact_id(row: Mapping[str, Any]) -> str | None:
    """The metric artifact holding a completed function step's return value, if it names one."""
    found = json_object(row["metadata"]).get("value_artifact_id")
    return str(found) if found else None


def step_record(row: Mapping[str, Any], values: Mapping[str, str]) -> StepRecord:
    """A ``steps`` row as a :class:`StepRecord`, its value taken from ``values`` by artifact id.

    Args:
        row: the event's row.
        values: the content (canonical JSON text) of metric artifacts, by id.
    """
    meta = json_object(row["metadata"])
    value_id = meta.get("value_artifact_id")
    return StepRecord(
        fingerprint=row["step_spec_id"],
        name=row["step_name"],
        version=row["version"] or "",
        status=StepStatus(row["status"]),
        step_run_id=row["step_run_id"],
        run_id=row["pipeline_run_id"],
        timestamp=from_micros(row["timestamp"]),
        config=json_object(row["params"]),
        output_path=meta.get("output_path"),
        output_artifact_id=meta.get("output_artifact_id"),
        value_json=values.get(value_id) if isinstance(value_id, str) else None,
        error=row["error"],
    )
