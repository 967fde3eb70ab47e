"""Step events and results: the rows a step writes to the log, and what ``run`` returns.

An event factory closes over a step attempt, so every event of the attempt (``running``, then
the final one) carries the same identity, params and input description.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from stemma.core.engine.planned_step import FileInputs, PlannedStep
from stemma.core.engine.references import OutputReference, StepResult
from stemma.core.execution_records import StepEvent
from stemma.core.graph.input_files import input_files_read
from stemma.core.graph.step_spec import StepSpec
from stemma.core.records import StepStatus
from stemma.core.unit_counts import CACHED_KEY, UnitCounts

if TYPE_CHECKING:
    from stemma.core.engine.run_context import RunContext

EventFactory = Callable[..., StepEvent]


def event_factory(ctx: RunContext, step: PlannedStep, step_run_id: str) -> EventFactory:
    """Events of one step attempt: call it with a status (and counts, errors, metadata)."""
    op = step.operation
    files = read_files(step)

    def make(
        status: StepStatus,
        *,
        counts: UnitCounts | None = None,
        total: int = 0,
        succeeded: int = 0,
        failed: int = 0,
        error: str | None = None,
        dispatch_error: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        duration: float | None = None,
    ) -> StepEvent:
        if counts is not None:  # the one definition (unit_counts.py); the ints are for hits
            total, succeeded, failed = counts.total, counts.succeeded, counts.failed
        return StepEvent(
            step_run_id=step_run_id,
            step_spec_id=step.fingerprint or "",
            pipeline_run_id=ctx.run_id,
            step_number=step.number,
            step_name=step.name,
            status=status,
            operation=op.label(),
            version=op.version_label(),
            params=op.event_params(),
            backend=ctx.backend.name,
            timestamp=dt.datetime.now(dt.UTC),
            dep_fingerprints=step.depends_on
            if step.depends_on is not None
            else tuple(ctx.steps[n].fingerprint or "" for n in step.upstream_steps()),
            output_roles=tuple(op.outputs),
            total_count=total,
            succeeded_count=succeeded,
            failed_count=failed,
            duration_seconds=duration,
            error=error,
            dispatch_error=dispatch_error,
            metadata={
                "inputs": describe_inputs(step),
                "inputs_from": inputs_from(ctx, step),
                "output_types": {r: s.artifact_type for r, s in op.outputs.items()},
                **files,
                **(counts.event_metadata() if counts is not None else {}),
                **(metadata or {}),
            },
        )

    return make


def inputs_from(ctx: RunContext, step: PlannedStep) -> list[str]:
    """The step runs whose outputs this step reads, sorted: part of what makes a hit valid."""
    return sorted({ctx.steps[n].outputs_from or "" for n in step.upstream_steps()})


def read_files(step: PlannedStep) -> dict[str, Any]:
    """``{"input_files": […]}``: the files a lazy step's key reads, named by path (else empty).

    A ``Path`` argument is keyed by its content alone; its path is recorded here, beside the
    key, so lineage can show the file a step was made from (see
    :func:`~stemma.core.graph.input_files.input_files_read`).
    """
    spec: object = getattr(step.operation, "lowered", None)
    if not isinstance(spec, StepSpec):
        return {}
    files = input_files_read(spec.step.inputs, spec.config["inputs"])
    return {"input_files": files} if files else {}


def describe_inputs(step: PlannedStep) -> dict[str, Any]:
    """The step's inputs for the log: references by step and role, literal ids by count."""
    described: dict[str, Any] = {}
    for role, given in step.inputs.items():
        if isinstance(given, OutputReference):
            described[role] = {"step": given.source_step, "role": given.role}
        elif isinstance(given, FileInputs):
            described[role] = {"files": [str(a.fields["path"]) for a in given.artifacts]}
        else:
            described[role] = {"ids": len(given)}
    return described


SKIPS_THAT_SUCCEED = frozenset({"empty_inputs"})
"""Skip reasons that still count as a success: the step had nothing to do. Skipped because a
dependency failed or the run was cancelled, it did not do what it was asked: not a success."""


def succeeded(event: StepEvent) -> bool:
    """The one rule for ``StepResult.success`` and ``finalize()``'s ``success``.

    Completed with no failed unit, or skipped with nothing to do.
    """
    if event.status is StepStatus.SKIPPED:
        return event.metadata.get("skip_reason") in SKIPS_THAT_SUCCEED
    return event.status is StepStatus.COMPLETED and event.failed_count == 0


def step_result(
    step: PlannedStep, step_run_id: str, event: StepEvent, started: float, *, cache: str | None
) -> StepResult:
    """The :class:`StepResult` of an attempt whose final event is ``event``."""
    counts = UnitCounts.of_event(event)
    return StepResult(
        step_name=step.name,
        step_number=step.number,
        success=succeeded(event),
        total_count=counts.total,
        succeeded_count=counts.succeeded,
        failed_count=counts.failed,
        cached_count=counts.cached,
        cancelled_count=counts.cancelled,
        output_roles=tuple(step.operation.outputs),
        output_types={r: s.artifact_type for r, s in step.operation.outputs.items()},
        duration_seconds=time.monotonic() - started,
        step_run_id=step_run_id,
        metadata={
            "status": event.status.value,
            "cache": cache,
            "step_spec_id": step.fingerprint,
            "skip_reason": event.metadata.get("skip_reason"),
            "execution_cache_hits": event.metadata.get(CACHED_KEY, 0),
            "error": event.error,
        },
    )
