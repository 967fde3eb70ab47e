"""Stopping a run's SLURM arrays with the force a cancel asks for, and waiting until they are gone.

``SlurmBackend`` submits and adopts; this holds what it does once the run must stop: the three
cancel levels (``CancelLevel``), the hard ``scancel`` a force cancel owes after its grace, and
the wait until squeue holds none of the run's jobs. No job of a run may outlive it, so every
way out (a cancel, the run's end, ``terminate``) ends in a hard ``scancel`` of what is left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import wait

from stemma.core.cancel_levels import CancelLevel
from stemma.slurm import commands
from stemma.slurm.element import crash_error
from stemma.slurm.poller import RunPoller

SQUEUE_DRAIN_SECONDS = 30.0
"""After a hard scancel, how long a stop waits for the run's jobs to leave squeue."""


class ArrayStopper:
    """Stops the arrays ``arrays()`` names, whose elements ``poller`` settles."""

    def __init__(self, poller: RunPoller, arrays: Callable[[], list[str]]) -> None:
        self._poller = poller
        self._arrays = arrays
        self._escalation: threading.Timer | None = None

    def cancel(self, level: CancelLevel, *, grace_seconds: float) -> None:
        """Stop the jobs with the force of ``level``; never blocks for long.

        1: nothing (the orchestrator stops dispatching); 2: SIGTERM now, a hard ``scancel``
        after ``grace_seconds`` (in the background); 3: SIGKILL and ``scancel`` now.

        Elements not started yet are dropped and their futures cancelled at levels 2 and 3.
        """
        if level is CancelLevel.GRACEFUL:
            return
        self._poller.cancel_reason = f"the run was cancelled ({level.describe()})"
        self._drop_unstarted()
        arrays = self._arrays()
        if not arrays:
            return
        # Waiting elements go first, so none starts in a slot a killed element frees.
        commands.scancel(arrays, pending_only=True)
        if level is CancelLevel.FORCE:
            commands.scancel(arrays, signal="TERM")
            # Not a daemon: the hard scancel must happen even if the orchestrator exits first
            # (a job whose step had not started yet when SIGTERM came has not stopped).
            self._escalation = threading.Timer(grace_seconds, commands.scancel, args=(arrays,))
            self._escalation.start()
        else:
            commands.scancel(arrays, signal="KILL")
            commands.scancel(arrays)

    def shutdown(self, *, cancel_pending: bool) -> None:
        """Wait for every element (dropping those not started when ``cancel_pending``).

        After a level-2 cancel, the hard ``scancel`` still to come is done now: the run is
        over, and none of its jobs may outlive it. Returns once squeue holds none of them (a
        job stays listed for a moment after its result is written).
        """
        self._escalate_now()
        if cancel_pending:
            self._drop_unstarted()
        wait(self._poller.unsettled())
        self._poller.stop()
        arrays = self._arrays()
        if arrays:
            _wait_gone(arrays, SQUEUE_DRAIN_SECONDS)

    def terminate(self, *, grace_seconds: float) -> None:
        """SIGTERM the jobs, hard ``scancel`` after ``grace_seconds`` (at once with none).

        Returns when squeue holds none of them; their futures fail with ``WorkerCrashedError``.
        """
        self._poller.cancel_reason = "the backend was terminated"
        if self._escalation is not None:
            self._escalation.cancel()  # superseded by the scancel below
        self._drop_unstarted()
        arrays = self._arrays()
        if arrays:
            commands.scancel(arrays, pending_only=True)
            commands.scancel(arrays, signal="TERM" if grace_seconds > 0 else "KILL")
            _wait_gone(arrays, grace_seconds)
            commands.scancel(arrays)
            _wait_gone(arrays, SQUEUE_DRAIN_SECONDS)
        self._poller.settle_all(
            lambda files: crash_error(
                files, state="CANCELLED", exit_code=None, reason="the backend was terminated"
            )
        )
        self._poller.stop()

    def _escalate_now(self) -> None:
        escalation, self._escalation = self._escalation, None
        if escalation is not None and escalation.is_alive():
            escalation.cancel()
            commands.scancel(self._arrays())

    def _drop_unstarted(self) -> None:
        self._poller.refresh_started()
        for future in self._poller.unsettled():
            future.cancel()  # a no-op for started elements


def _wait_gone(arrays: list[str], seconds: float) -> None:
    wanted = set(arrays)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not wanted & {job for job, _ in commands.squeue_jobs()}:
            return
        time.sleep(0.5)
