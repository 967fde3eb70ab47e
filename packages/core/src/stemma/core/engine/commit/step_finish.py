"""How a step attempt ends: its units' wave committed, then its final event, and its result.

Shared by every kind of step (docs/concepts/execution-flow.md): the status follows from the
counts, the failure policy and the run's cancellation, never from which front door submitted
the step.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from stemma.core.engine.commit.unit_tally import UnitTally
from stemma.core.engine.planned_step import FailurePolicy, PlannedStep
from stemma.core.engine.references import StepResult
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.step_events import EventFactory, event_factory, step_result
from stemma.core.execution_records import StepEvent, StepOutputs
from stemma.core.records import StepStatus
from stemma.core.run_ids import new_attempt_id
from stemma.core.store.protocols import WaveProblem
from stemma.core.unit_counts import UnitCounts


def skipped_by_cancel(
    ctx: RunContext, step: PlannedStep, started: float, *, reason: str = "cancelled"
) -> StepResult:
    """A step reached after the run was cancelled: skipped, and never a cache hit later.

    Also a step reached after a ``fail_fast`` failure halted the run (``reason``).
    """
    step_run_id = new_attempt_id()
    step.outputs_from = step_run_id
    event = event_factory(ctx, step, step_run_id)(
        StepStatus.SKIPPED, metadata={"skip_reason": reason}
    )
    ctx.record([event])
    ctx.monitor.step_finished(step.number, StepStatus.SKIPPED)
    return step_result(step, step_run_id, event, started, cache=None)


def finish_step(
    ctx: RunContext,
    step: PlannedStep,
    event: EventFactory,
    started: float,
    tally: UnitTally | None = None,
    *,
    skip_reason: str | None = None,
    dispatch_error: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> StepResult:
    """Commit what the step's units staged (one wave), then write its final event.

    Args:
        ctx: the run.
        step: the step.
        event: the step attempt's event factory.
        started: ``time.monotonic()`` when the step started.
        tally: what its units came to (none ran when omitted).
        skip_reason: the step is skipped for this reason.
        dispatch_error: the step could not dispatch its units (it fails).
        extra: more metadata for the final event.
    """
    tally = tally or UnitTally(expected=0)
    # (the tally's sets are sorted in place of a copy: a step of 10^6 units holds 10^6 ids)
    roles = [
        *step.operation.outputs,
        *(r for r in tally.outputs if r not in step.operation.outputs),
    ]
    step_outputs = StepOutputs(
        step_run_id=step.outputs_from or "",
        outputs={role: tuple(sorted(tally.outputs.pop(role, ()))) for role in roles},
    )
    # Commit first: a bundle the wave had to leave out (a file missing past the staging
    # timeout, an unreadable one quarantined) is a failed unit, so the step is no cache hit.
    # A pack's units share one bundle: commit each bundle once.
    with ctx.commit_lock:
        report = ctx.store.commit_wave(list(tally.bundles), step_outputs=step_outputs)
    final = final_event(
        ctx,
        step,
        event,
        started,
        tally,
        report.problems,
        skip_reason=skip_reason,
        dispatch_error=dispatch_error,
        extra=extra,
    )
    ctx.record(
        [final],
        then=lambda: ctx.monitor.step_finished(
            step.number, final.status, counts=UnitCounts.of_event(final)
        ),
    )
    return step_result(step, final.step_run_id, final, started, cache=None)


def final_event(
    ctx: RunContext,
    step: PlannedStep,
    event: EventFactory,
    started: float,
    tally: UnitTally,
    problems: Sequence[WaveProblem],
    *,
    skip_reason: str | None = None,
    dispatch_error: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> StepEvent:
    """The step's final event, from its units' tally and what its commit left out."""
    counts = tally.counts(lost={problem.bundle for problem in problems})
    stopped = counts.cancelled > 0
    if skip_reason is not None:
        status = StepStatus.SKIPPED
    elif stopped and ctx.cancelled.is_set():
        status = StepStatus.CANCELLED  # the run was cancelled mid-step: never a cache hit
    elif dispatch_error is not None or (
        counts.failed and (counts.succeeded == 0 or step.failure_policy is FailurePolicy.FAIL_FAST)
    ):
        status = StepStatus.FAILED  # fail_fast stops dispatching too: the step failed
    elif stopped:
        status = StepStatus.CANCELLED
    else:
        status = StepStatus.COMPLETED
    first_error = dispatch_error or tally.first_error or (problems[0].error if problems else None)
    return event(
        status,
        counts=counts,
        error=first_error,
        dispatch_error=dispatch_error,
        metadata={
            "skip_reason": skip_reason,
            "staging_problems": [dict(problem.to_dict()) for problem in problems],
            **({"unit_seconds": tally.unit_seconds} if tally.unit_seconds is not None else {}),
            **(extra or {}),
        },
        duration=time.monotonic() - started,
    )
