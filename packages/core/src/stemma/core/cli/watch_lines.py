"""What changed between two reads of a run's state, as plain lines: ``stemma watch`` without a TTY.

Pure: the same two states always give the same lines, so logs diff cleanly between runs.
"""

from __future__ import annotations

from stemma.core.cancel_levels import CancelLevel
from stemma.core.live import RunState, RunStatus, StepState


def step_counts(step: StepState) -> str:
    """``3/10 (succeeded 3, cached 1, failed 0, cancelled 0, running 4)``.

    The counts of :class:`~stemma.core.unit_counts.UnitCounts`: ``cached`` is part of
    ``succeeded``, and done is ``succeeded + failed + cancelled``.
    """
    return (
        f"{step.done}/{step.total} (succeeded {step.succeeded}, cached {step.cached}, "
        f"failed {step.failed}, cancelled {step.cancelled}, running {step.running})"
    )


def change_lines(previous: RunState | None, current: RunState) -> list[str]:
    """One line per event between ``previous`` (None: nothing seen yet) and ``current``."""
    lines: list[str] = []
    if previous is None:
        lines.append(
            f"run {current.run_id} {current.status} on {current.host} (pid {current.pid}, "
            f"backend {current.backend}), {len(current.steps)} steps"
        )
    if previous is not None and current.cancel_level != previous.cancel_level:
        level = CancelLevel(current.cancel_level).describe() if current.cancel_level else "none"
        lines.append(f"cancel level {current.cancel_level}: {level}")
    before = {step.number: step for step in previous.steps} if previous else {}
    for step in current.steps:
        lines.extend(_step_lines(before.get(step.number), step))
    if previous is not None and current.status != previous.status:
        lines.append(f"run {current.run_id} {current.status}")
    return lines


def summary_line(state: RunState) -> str:
    """The last line: the run's outcome and its units."""
    failed = sum(step.failed for step in state.steps)
    cancelled = sum(step.cancelled for step in state.steps)
    done = sum(step.done for step in state.steps)
    total = sum(step.total for step in state.steps)
    line = (
        f"run {state.run_id} {state.status}: {len(state.steps)} steps, "
        f"{done}/{total} units, {failed} failed, {cancelled} cancelled"
    )
    if state.status is RunStatus.STALE:
        line += f"; its orchestrator is gone: `stemma reap {state.run_id}` settles it"
    return line


def _step_lines(before: StepState | None, step: StepState) -> list[str]:
    label = f"step {step.number} {step.name}"
    lines: list[str] = []
    if before is None or before.status != step.status:
        cache = " (cache hit)" if step.cache == "step" else ""
        lines.append(f"{label}: {step.status}{cache} {step_counts(step)}")
    elif _counts(before) != _counts(step):
        lines.append(f"{label}: {step_counts(step)}")
    if step.jobs and (before is None or dict(before.jobs) != dict(step.jobs)):
        jobs = " ".join(f"{state}={count}" for state, count in sorted(step.jobs.items()))
        lines.append(f"{label}: jobs {jobs}")
    return lines


def _counts(step: StepState) -> tuple[int, ...]:
    return (step.total, step.cached, step.succeeded, step.failed, step.cancelled, step.running)
