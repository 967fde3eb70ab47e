"""Reading a pipeline's history back: the runs on a root, and the steps of one run to resume.

A resumed run continues the step numbering of the run it resumes, and its finished steps can be
referenced again (``pipeline.output(name, role)``): each is restored from its final event with
its key and the step run whose outputs it offers, without running anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import polars as pl

from stemma.core.engine import FailurePolicy, PlannedStep, StepResult, succeeded
from stemma.core.errors import StemmaError
from stemma.core.execution_records import StepEvent
from stemma.core.operations.registry import get_operation
from stemma.core.records import StepStatus
from stemma.core.unit_counts import UnitCounts

_RUN_COLUMNS = {
    "pipeline_run_id": pl.String,
    "steps": pl.Int64,
    "last_status": pl.String,
    "started": pl.Datetime("us", "UTC"),
    "ended": pl.Datetime("us", "UTC"),
}


def runs_frame(events: Sequence[StepEvent]) -> pl.DataFrame:
    """One row per run: id, step count, last status, first and last event times, newest first."""
    if not events:
        return pl.DataFrame(schema=_RUN_COLUMNS)
    frame = pl.DataFrame(
        {
            "pipeline_run_id": [e.pipeline_run_id for e in events],
            "step_number": [e.step_number for e in events],
            "status": [e.status.value for e in events],
            "timestamp": [e.timestamp for e in events],
        }
    )
    return (
        frame.sort("timestamp")
        .group_by("pipeline_run_id")
        .agg(
            pl.col("step_number").n_unique().alias("steps"),
            pl.col("status").last().alias("last_status"),
            pl.col("timestamp").min().alias("started"),
            pl.col("timestamp").max().alias("ended"),
        )
        .sort("started", descending=True)
    )


def latest_run_id(events: Sequence[StepEvent], name: str) -> str | None:
    """The newest run of pipeline ``name`` (run ids are ``{name}_{time}_{hex}``)."""
    prefix = f"{name}_"
    runs = [e for e in events if e.pipeline_run_id.startswith(prefix)]
    return max(runs, key=lambda e: e.timestamp).pipeline_run_id if runs else None


def restore_steps(events: Sequence[StepEvent]) -> tuple[dict[int, PlannedStep], int]:
    """The finished steps of one run, restored, and the next step number."""
    final: dict[int, StepEvent] = {}
    for event in sorted(events, key=lambda e: e.timestamp):
        if event.status is not StepStatus.RUNNING:
            final[event.step_number] = event
    restored: dict[int, PlannedStep] = {}
    for number, event in final.items():
        step = _restore(event)
        if step is not None:
            restored[number] = step
    next_number = max((e.step_number for e in events), default=-1) + 1
    return restored, next_number


def _restore(event: StepEvent) -> PlannedStep | None:
    try:
        cls = get_operation(event.operation)
    except (StemmaError, LookupError, ValueError):
        return None  # its operation is gone: it stays numbered, not referenceable
    settings: dict[str, Any] = dict(event.params)
    overrides: dict[str, Any] = dict(settings.get("overrides") or {})
    try:
        operation = cls.build(
            params=settings.get("params"),
            environment=overrides.get("environment"),
            tool=overrides.get("tool"),
        )
    except (StemmaError, LookupError, ValueError):
        # The params as recorded do not always rebuild the operation (IngestData records its
        # files' hashes, not their paths; a class may have changed). A restored step never
        # runs again: what its downstream steps read of it is its class (output roles, name),
        # its fingerprint and its outputs, so an unvalidated instance serves, if one can be had.
        try:
            operation = cls.model_construct(params=None)
        except Exception:  # (a default factory that needs what was not recorded)
            return None  # it stays numbered, not referenceable
    future: Future[StepResult] = Future()
    step = PlannedStep(
        number=event.step_number,
        name=event.step_name,
        operation=operation,
        inputs={},
        failure_policy=FailurePolicy.CONTINUE,
        skip_cache=False,
        future=future,
        fingerprint=event.step_spec_id,
        outputs_from=str(event.metadata.get("outputs_from") or event.step_run_id),
    )
    counts = UnitCounts.of_event(event)
    future.set_result(
        StepResult(
            step_name=event.step_name,
            step_number=event.step_number,
            success=succeeded(event),
            total_count=counts.total,
            succeeded_count=counts.succeeded,
            failed_count=counts.failed,
            cached_count=counts.cached,
            cancelled_count=counts.cancelled,
            output_roles=tuple(operation.outputs),
            output_types={r: s.artifact_type for r, s in operation.outputs.items()},
            duration_seconds=event.duration_seconds or 0.0,
            step_run_id=event.step_run_id,
            metadata={
                "status": event.status.value,
                "cache": "restored",
                "step_spec_id": event.step_spec_id,
            },
        )
    )
    return step


def summarize(name: str, run_id: str, steps: Sequence[PlannedStep]) -> dict[str, Any]:
    """``finalize()``'s summary: per step its counts, and whether everything succeeded."""
    rows: list[dict[str, Any]] = []
    for step in steps:
        error = step.future.exception()
        result = None if error is not None else step.future.result()
        rows.append(
            {
                "step_number": step.number,
                "name": step.name,
                "success": bool(result and result.success),
                "status": str(result.metadata.get("status")) if result else "failed",
                "total": result.total_count if result else 0,
                "succeeded": result.succeeded_count if result else 0,
                "failed": result.failed_count if result else 0,
                "cached": result.cached_count if result else 0,
                "cancelled": result.cancelled_count if result else 0,
                "duration_seconds": result.duration_seconds if result else 0.0,
            }
        )
    return {
        "pipeline_name": name,
        "pipeline_run_id": run_id,
        "total_steps": len(rows),
        "steps": rows,
        "overall_success": bool(rows) and all(row["success"] for row in rows),
    }
