"""What changed between two reads of a run's state, as plain lines: ``stemma watch`` without a TTY.

Pure: the same two states always give the same lines, so logs diff cleanly between runs.
"""

from __future__ import annotations

from dataclasses import replace

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


def change_lines(previous: RunState | None, current: RunState, *, counts: bool = True) -> list[str]:
    """One line per event between ``previous`` (None: nothing seen yet) and ``current``.

    Args:
        previous: the state the reader was last told of.
        current: the state just read.
        counts: False leaves out the lines that only say a step's counts or its scheduler
            jobs moved (a status change still gives its line, with the counts).
    """
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
        lines.extend(_step_lines(before.get(step.number), step, counts=counts))
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


class LineFeed:
    """The lines of one run for a log someone reads later: ``stemma run``'s batch output.

    Statuses, cancels and the run's end are told at once; count-only lines at most every
    ``count_every`` seconds, so a step of 10,000 units gives a handful of lines, not one per
    poll. Pure: the clock is an argument.
    """

    def __init__(self, count_every: float = 0.0) -> None:
        """A feed whose count-only lines come at most every ``count_every`` seconds.

        Args:
            count_every: 0 tells every change, as ``stemma watch`` does.
        """
        self._count_every = count_every
        self._told: RunState | None = None
        self._counted_at = 0.0

    def lines(self, current: RunState, now: float) -> list[str]:
        """The lines that tell what changed since the last call; ``now`` in seconds."""
        due = (
            self._told is None
            or current.status is not RunStatus.RUNNING
            or now - self._counted_at >= self._count_every
        )
        lines = change_lines(self._told, current, counts=due)
        if due:
            self._counted_at = now
            self._told = current
        else:
            self._told = _told_after(self._told, current)
        return lines


def _told_after(told: RunState | None, current: RunState) -> RunState:
    """What the reader knows after status-only lines.

    The counts they were not shown stay old, so the next due call shows them; a status line
    carries its step's counts, so that step is told in full.
    """
    before = {step.number: step for step in told.steps} if told else {}
    steps = tuple(
        before[step.number]
        if step.number in before and before[step.number].status == step.status
        else step
        for step in current.steps
    )
    return replace(current, steps=steps)


def _step_lines(before: StepState | None, step: StepState, *, counts: bool) -> list[str]:
    label = f"step {step.number} {step.name}"
    lines: list[str] = []
    if before is None or before.status != step.status:
        cache = " (cache hit)" if step.cache == "step" else ""
        lines.append(f"{label}: {step.status}{cache} {step_counts(step)}")
    elif counts and _counts(before) != _counts(step):
        lines.append(f"{label}: {step_counts(step)}")
    if step.jobs and (before is None or (counts and dict(before.jobs) != dict(step.jobs))):
        jobs = " ".join(f"{state}={count}" for state, count in sorted(step.jobs.items()))
        lines.append(f"{label}: jobs {jobs}")
    return lines


def _counts(step: StepState) -> tuple[int, ...]:
    return (step.total, step.cached, step.succeeded, step.failed, step.cancelled, step.running)
