"""Records to table rows: pure functions, no I/O, one per thing the store writes."""

from __future__ import annotations

from typing import Any

import polars as pl

from stemma.core.canonical import dumps_plain
from stemma.core.records import StepOutcome, StepSkipped, StepStarted, StepStatus
from stemma.storage.schemas import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    FILE_REFS,
    METRICS,
    STEPS,
    TableSpec,
)

FILE_REF = "file_ref"
METRIC = "metric"
OUTPUT_ROLE = "output"
"""The role of a function step's ``OUT`` file ref."""
VALUE_ROLE = "value"
"""The role of a function step's return value (a metric)."""


def app_id(execution_run_id: str) -> str:
    """The Delta application-transaction id that makes committing one bundle idempotent."""
    return f"stemma-exec-{execution_run_id}"


def started_row(event: StepStarted) -> dict[str, Any]:
    """The ``running`` steps-table row of a step attempt."""
    return _step_row(event, StepStatus.RUNNING, timestamp=event.timestamp)


def skipped_row(event: StepSkipped) -> dict[str, Any]:
    """The ``skipped`` steps-table row of a step that was not run."""
    started = StepStarted(
        step=event.step,
        step_run_id=event.step_run_id,
        run_id=event.run_id,
        step_number=0,  # never dispatched: it had no place in the run's order
        backend="",
        timestamp=event.timestamp,
    )
    row = _step_row(started, StepStatus.SKIPPED, timestamp=event.timestamp)
    row.update(
        total_count=0,
        error=event.detail,
        metadata=dumps_plain({"reason": event.reason}),
    )
    return row


def outcome_frames(outcome: StepOutcome) -> dict[TableSpec, pl.DataFrame]:
    """Every row one finished execution adds, per table (tables with no rows are left out)."""
    # (an outcome staged before its attempt's running event was recorded carries that too)
    steps = [started_row(outcome.started)] if outcome.carries_start else []
    rows: dict[TableSpec, list[dict[str, Any]]] = {
        METRICS: [],
        FILE_REFS: [],
        ARTIFACT_INDEX: [],
        ARTIFACT_EDGES: [],
        EXECUTION_EDGES: [],
        STEPS: [*steps, _final_step_row(outcome)],
        EXECUTIONS: [_execution_row(outcome)],
    }
    name = outcome.started.step.name
    targets: list[tuple[str, str, str]] = []
    if outcome.output is not None:
        out = outcome.output
        targets.append((out.artifact_id, FILE_REF, OUTPUT_ROLE))
        rows[FILE_REFS].append(
            {
                "artifact_id": out.artifact_id,
                "path": out.relative_path,
                "content_hash": out.content_hash,
                "size": out.size,
                "file_count": out.file_count,
                "origin_step_name": name,
            }
        )
    if outcome.value_artifact_id is not None and outcome.value_json is not None:
        targets.append((outcome.value_artifact_id, METRIC, VALUE_ROLE))
        rows[METRICS].append(
            {
                "artifact_id": outcome.value_artifact_id,
                "content": outcome.value_json,
                "origin_step_name": name,
            }
        )
    for artifact_id, kind, role in targets:
        rows[ARTIFACT_INDEX].append(_index_row(outcome, artifact_id, kind))
        rows[EXECUTION_EDGES].append(_execution_edge(outcome, "output", role, artifact_id))
    for role, artifact_ids in outcome.input_artifact_ids.items():
        for position, source in enumerate(artifact_ids):
            rows[EXECUTION_EDGES].append(_execution_edge(outcome, "input", role, source, position))
            for target, kind, target_role in targets:
                rows[ARTIFACT_EDGES].append(
                    {
                        "execution_run_id": outcome.execution_run_id,
                        "source_artifact_id": source,
                        "target_artifact_id": target,
                        # The outcome does not say what an input is; the commit fills it in.
                        "source_artifact_type": None,
                        "target_artifact_type": kind,
                        "source_role": role,
                        "target_role": target_role,
                        "group_id": None,
                        "step_boundary": True,
                    }
                )
    return {spec: spec.frame(found) for spec, found in rows.items() if found}


def _index_row(outcome: StepOutcome, artifact_id: str, kind: str) -> dict[str, Any]:
    return {
        "artifact_id": artifact_id,
        "artifact_type": kind,
        "origin_step_run_id": outcome.started.step_run_id,
        "origin_step_name": outcome.started.step.name,
        "origin_step": outcome.started.step_number,
        "created_at": outcome.ended_at,
        "metadata": dumps_plain({}),
    }


def _execution_edge(
    outcome: StepOutcome, direction: str, role: str, artifact_id: str, position: int = 0
) -> dict[str, Any]:
    return {
        "execution_run_id": outcome.execution_run_id,
        "direction": direction,
        "role": role,
        "artifact_id": artifact_id,
        "position": position,
    }


def _execution_row(outcome: StepOutcome) -> dict[str, Any]:
    started = outcome.started
    return {
        "execution_run_id": outcome.execution_run_id,
        "execution_spec_id": outcome.execution_spec_id,
        "step_run_id": started.step_run_id,
        "step_spec_id": started.step.fingerprint,
        "step_name": started.step.name,
        "step_number": started.step_number,
        "operation": started.step.name,
        "version": started.step.version,
        "params": dumps_plain(dict(started.step.config)),
        "overrides": dumps_plain({}),
        "started_at": started.timestamp,
        "ended_at": outcome.ended_at,
        "worker": outcome.worker,
        "backend": started.backend,
        "success": outcome.success,
        "error": outcome.error,
        "tool_output": None,
        "worker_log": None,
        "provenance": dumps_plain(outcome.provenance.to_dict()),
        "metadata": dumps_plain({}),
    }


def _final_step_row(outcome: StepOutcome) -> dict[str, Any]:
    status = StepStatus.COMPLETED if outcome.success else StepStatus.FAILED
    row = _step_row(outcome.started, status, timestamp=outcome.ended_at)
    metadata: dict[str, Any] = {}
    if outcome.success:
        metadata = {
            "output_path": outcome.output.relative_path if outcome.output else None,
            "output_artifact_id": outcome.output.artifact_id if outcome.output else None,
            "value_artifact_id": outcome.value_artifact_id,
        }
    row.update(
        succeeded_count=int(outcome.success),
        failed_count=int(not outcome.success),
        duration_seconds=(outcome.ended_at - outcome.started.timestamp).total_seconds(),
        error=outcome.error,
        metadata=dumps_plain(metadata),
    )
    return row


def _step_row(event: StepStarted, status: StepStatus, *, timestamp: Any) -> dict[str, Any]:
    return {
        "step_run_id": event.step_run_id,
        "step_spec_id": event.step.fingerprint,
        "pipeline_run_id": event.run_id,
        "step_number": event.step_number,
        "step_name": event.step.name,
        "status": status.value,
        "operation": event.step.name,
        "version": event.step.version,
        "params": dumps_plain(dict(event.step.config)),
        "dep_fingerprints": list(event.step.dep_fingerprints),
        "backend": event.backend,
        "output_roles": [OUTPUT_ROLE, VALUE_ROLE],
        "total_count": 1,
        "succeeded_count": 0,
        "failed_count": 0,
        "timestamp": timestamp,
        "duration_seconds": None,
        "error": None,
        "dispatch_error": None,
        "commit_error": None,
        "metadata": dumps_plain({}),
    }
