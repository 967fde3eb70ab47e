"""What changed between two reads of a run's state, as plain lines: ``stemma watch`` without a TTY.

Pure: the same two states always give the same lines, so logs diff cleanly between runs.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from stemma.core.cancel_levels import CancelLevel
from stemma.core.live import RunState, RunStatus, StepState
from stemma.core.runs.run_rows import run_outcome


def step_counts(step: StepState) -> str:
    """``3/10 (succeeded 3, cached 1, failed 0, cancelled 0, running 4)``.

    The counts of :class:`~stemma.core.unit_counts.UnitCounts`: ``cached`` is part of
    ``succeeded``, and done is ``succeeded + failed + cancelled``.
    """
    return (
        f"{step.done}/{step.total} (succeeded {step.succeeded}, cached {step.cached}, "
        f"failed {step.failed}, cancelled {step.cancelled}, running {step.running})"
    )


def change_lines(
    previous: RunState | None, current: RunState, *, counts: bool | Collection[int] = True
) -> list[str]:
    """One line per event between ``previous`` (None: nothing seen yet) and ``current``.

    Args:
        previous: the state the reader was last told of.
        current: the state just read.
        counts: False leaves out the lines that only say a step's counts or its scheduler
            jobs moved (a status change still gives its line, with the counts); a collection
            of step numbers keeps them for those steps only.
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
        told = counts if isinstance(counts, bool) else step.number in counts
        lines.extend(_step_lines(before.get(step.number), step, counts=told))
    # an ended run is told by its summary line (write_lines), which says more than its status
    if (
        previous is not None
        and current.status != previous.status
        and current.status is RunStatus.RUNNING
    ):
        lines.append(f"run {current.run_id} {current.status}")
    return lines


def summary_line(state: RunState) -> str:
    """The last line: the run's outcome (a completed run with failed units is ``failed``)."""
    failed = sum(step.failed for step in state.steps)
    cancelled = sum(step.cancelled for step in state.steps)
    done = sum(step.done for step in state.steps)
    total = sum(step.total for step in state.steps)
    line = (
        f"run {state.run_id} {run_outcome(state)}: {len(state.steps)} steps, "
        f"{done}/{total} units, {failed} failed, {cancelled} cancelled"
    )
    if state.status is RunStatus.STALE:
        line += (
            f"; its orchestrator is gone: `stemma resume {state.run_id}` starts it again "
            f"(waiting for what still runs), `stemma reap {state.run_id}` settles it"
        )
    return line


class LineFeed:
    """The lines of one run for a log someone reads later: ``stemma run``'s batch output.

    Statuses, cancels and the run's end are told at once; a step's count-only lines at most
    every ``count_every`` seconds per step, so a step of 10,000 units gives a handful of lines,
    not one per poll, and a busy step does not hold back another's. Pure: the clock is an
    argument.
    """

    def __init__(self, count_every: float = 0.0) -> None:
        """A feed whose count-only lines of a step come at most every ``count_every`` seconds.

        Args:
            count_every: 0 tells every change, as ``stemma watch`` does.
        """
        self._count_every = count_every
        self._told: RunState | None = None
        self._counted_at: dict[int, float] = {}
        """When each step's counts were last told (a status line carries them too)."""

    def lines(self, current: RunState, now: float) -> list[str]:
        """The lines that tell what changed since the last call; ``now`` in seconds."""
        ended = current.status is not RunStatus.RUNNING
        due = {
            step.number
            for step in current.steps
            if ended
            or step.number not in self._counted_at
            or now - self._counted_at[step.number] >= self._count_every
        }
        lines = change_lines(self._told, current, counts=due)
        before = {step.number: step for step in self._told.steps} if self._told else {}
        for step in current.steps:
            was = before.get(step.number)
            if (
                was is None
                or was.status != step.status
                or (step.number in due and _counts(was) != _counts(step))
            ):
                self._counted_at[step.number] = now
        self._told = _told_after(self._told, current, due)
        return lines


def _told_after(told: RunState | None, current: RunState, due: Collection[int]) -> RunState:
    """What the reader knows after this call's lines.

    A step whose counts were due is told in full, and so is one whose status line carried its
    counts; the others' counts stay old, so their next due call shows them.
    """
    before = {step.number: step for step in told.steps} if told else {}
    steps = tuple(
        before[step.number]
        if step.number not in due
        and step.number in before
        and before[step.number].status == step.status
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
