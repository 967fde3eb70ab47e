"""What the run screen says of a stale run: what its scheduler still holds, and the ways on.

The scheduler is asked (one query, in a thread worker) when the run turns stale and every
:data:`JOBS_SECONDS` after: a stale run changes only as its leftover elements start and end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from textual.message import Message

from stemma.core.live import StepState
from stemma.core.runs.alive_jobs import AliveJobs

if TYPE_CHECKING:
    # Annotations only: the relaunch checks (and launching) are for r, not for every stale run.
    from stemma.core.runs.relaunch import Relaunch

JOBS_SECONDS = 10.0
"""How often the scheduler is asked again while the run screen shows a stale run."""


class JobsLoaded(Message):
    """The scheduler said what it still holds of the run."""

    def __init__(self, jobs: AliveJobs) -> None:
        super().__init__()
        self.jobs = jobs


class ResumeReady(Message):
    """A stale run's recorded command was read and checked: ask before starting it."""

    def __init__(self, relaunch: Relaunch) -> None:
        super().__init__()
        self.relaunch = relaunch


class StaleJobs:
    """The last answer about a stale run's elements, and when to ask again."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._asked_at: float | None = None
        self.jobs: AliveJobs | None = None
        """None until the scheduler answered."""

    def due(self) -> bool:
        """Whether to ask the scheduler now."""
        return self._asked_at is None or self._clock() - self._asked_at >= JOBS_SECONDS

    def asked(self) -> None:
        """A query was sent."""
        self._asked_at = self._clock()

    def took(self, jobs: AliveJobs) -> None:
        """The scheduler answered."""
        self.jobs = jobs

    def describe(self, run_id: str, *, resumable: bool) -> str:
        """The line under a stale run's facts: its elements still in the scheduler, and the keys."""
        resume = "r resumes it" if resumable else f"`stemma resume {run_id}` resumes it"
        jobs = self.jobs
        if jobs is None:
            return f"asking the scheduler what is left… · {resume}"
        said = jobs.summary() or "nothing of it is left in a scheduler"
        if jobs.problem:
            said = f"could not ask the scheduler ({jobs.problem})"
        if jobs.adoptable:
            return f"{said} · {resume}, waiting for them · `stemma reap` cancels them"
        cached = "(its finished work is cached)"
        return f"{said} · {resume} {cached} · `stemma reap` settles it"

    def steps(self, steps: tuple[StepState, ...]) -> tuple[StepState, ...]:
        """The steps with their jobs column as the scheduler holds them now, not as last written.

        What the dead orchestrator last wrote of its elements went stale with it.
        """
        if self.jobs is None or self.jobs.problem:
            return steps
        held = self.jobs.by_step()
        return tuple(replace(step, jobs=held.get(step.number, {})) for step in steps)
