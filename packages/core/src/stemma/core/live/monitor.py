"""``RunMonitor``: the orchestrator's running tally of a run, for the live state file.

Step threads report what happens (a step starts, its units are planned, a unit comes back, the
step ends); the live channel takes a snapshot once a second. Reporting is a dict update under one
lock: cheap enough to call per unit.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from dataclasses import replace

from stemma.core.live.launch_record import launch_command, resumed_run
from stemma.core.live.state import RunState, RunStatus, StepState, utc_now
from stemma.core.provenance import current_user
from stemma.core.unit_counts import UnitCounts

_HARD = 3
"""The hard cancellation level: the process is about to exit."""


class RunMonitor:
    """Thread-safe per-step counts and statuses of one run."""

    def __init__(self, *, run_id: str, name: str, root: str, backend: str) -> None:
        self._lock = threading.Lock()
        self._steps: dict[int, StepState] = {}
        self._run = RunState(
            run_id=run_id,
            name=name,
            status=RunStatus.RUNNING,
            pid=os.getpid(),
            host=socket.gethostname(),
            root=root,
            backend=backend,
            started_at=utc_now(),
            heartbeat=utc_now(),
            # What tells this run apart from others of the same pipeline, and what a resume
            # would run again: read at run start, as the script sees them.
            user=current_user(),
            command=tuple(sys.argv),
            cwd=_working_directory(),
            launch=launch_command(),
            resumes=resumed_run(name),
        )
        self.version = 0
        """Bumped on every change, so the writer knows whether there is news."""

    @property
    def run_id(self) -> str:
        """The run being monitored."""
        return self._run.run_id

    def step_submitted(
        self, number: int, name: str, operation: str, *, upstream: tuple[int, ...] = ()
    ) -> None:
        """A step was submitted: pending until its inputs are committed.

        Args:
            number: the step's number in the run.
            name: its name.
            operation: its operation's name.
            upstream: the numbers of the steps it reads outputs of (the dashboard's tree).
        """
        step = StepState(number=number, name=name, operation=operation, upstream=upstream)
        self._put(step)

    def step_started(self, number: int) -> None:
        """A step's thread began working on it."""
        self._update(number, status="running", started_at=utc_now())

    def units_planned(self, number: int, *, total: int, cached: int) -> None:
        """The step has ``total`` units, ``cached`` of them (so far) answered by the cache."""
        with self._lock:
            step = self._steps.get(number)
            if step is None:
                return  # a step restored by resume(): it is history, not live
            # (cache hits are succeeded units too: one definition, unit_counts.py)
            succeeded = step.succeeded + max(0, cached - step.cached)
            self._steps[number] = replace(step, total=total, cached=cached, succeeded=succeeded)
            self.version += 1

    def units_sent(self, number: int, count: int) -> None:
        """``count`` units were handed to the backend."""
        with self._lock:
            step = self._steps[number]
            self._steps[number] = replace(step, running=step.running + count)
            self.version += 1

    def units_back(self, number: int, *, succeeded: int, failed: int, cancelled: int = 0) -> None:
        """Units came back from the backend (before the step's commit)."""
        with self._lock:
            step = self._steps[number]
            back = succeeded + failed + cancelled
            self._steps[number] = replace(
                step,
                running=max(0, step.running - back),
                succeeded=step.succeeded + succeeded,
                failed=step.failed + failed,
                cancelled=step.cancelled + cancelled,
            )
            self.version += 1

    def step_jobs(self, number: int, jobs: dict[str, int]) -> None:
        """The scheduler's job states of the step's elements (SLURM)."""
        self._update(number, jobs=dict(jobs))

    def step_finished(
        self,
        number: int,
        status: str,
        *,
        cache: str | None = None,
        counts: UnitCounts | None = None,
    ) -> None:
        """The step reached a final status (``completed``, ``failed``, ``cancelled``, …).

        Args:
            number: the step.
            status: its final status.
            cache: ``step`` for a step-level cache hit.
            counts: its final counts, as its final event and ``StepResult`` have them; without
                them, what was counted live, with nothing left running or pending.
        """
        with self._lock:
            step = self._steps.get(number)
            if step is None:
                return
            if counts is not None:
                step = replace(
                    step,
                    total=counts.total,
                    succeeded=counts.succeeded,
                    cached=counts.cached,
                    failed=counts.failed,
                    cancelled=counts.cancelled,
                    running=0,
                )
            self._steps[number] = replace(step.settled(status, ended_at=utc_now()), cache=cache)
            self.version += 1

    def cancel_level(self, level: int) -> None:
        """A cancellation level was applied."""
        with self._lock:
            self._run = replace(self._run, cancel_level=max(level, self._run.cancel_level))
            self.version += 1

    def snapshot(self, *, final: bool = False) -> RunState:
        """The run as of now; ``final`` when the run is over (status decided from the steps)."""
        with self._lock:
            steps = tuple(self._steps[n] for n in sorted(self._steps))
            run = replace(self._run, steps=steps, heartbeat=utc_now())
        if final or run.cancel_level >= _HARD:  # a hard cancel is the end, whoever writes
            run = run.settled(_final_status(run), ended_at=utc_now())
        return run

    def _put(self, step: StepState) -> None:
        with self._lock:
            self._steps[step.number] = step
            self.version += 1

    def _update(self, number: int, **changes: object) -> None:
        with self._lock:
            step = self._steps.get(number)
            if step is None:
                return  # a step restored by resume(): it is history, not live
            self._steps[number] = replace(step, **changes)  # pyright: ignore[reportArgumentType]
            self.version += 1


def _final_status(run: RunState) -> RunStatus:
    statuses = {step.status for step in run.steps}
    if run.cancel_level or "cancelled" in statuses:
        return RunStatus.CANCELLED
    if "failed" in statuses:
        return RunStatus.FAILED
    return RunStatus.COMPLETED


def _working_directory() -> str:
    try:
        return os.getcwd()
    except OSError:  # removed under the process: the run goes on, its state says nothing
        return ""
