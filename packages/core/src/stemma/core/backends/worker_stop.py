"""A worker told to stop early: the unit running fails, the rest of its pack does not start.

A scheduler warns a job shortly before its time limit (SLURM sends the signal stemma-slurm asks
for). The backend's handler calls :func:`request_stop` with the reason and raises
:class:`WorkerStopping` in the unit that is running, which fails with that reason; the pack
loop then sees :func:`stop_reason` and records each unit not yet started as failed with the
same reason instead of running it, and stages the pack. So the units that finished are
committed, the others are recorded as failures a rerun retries, and none is lost to the hard
kill that follows.

Process-wide state, as a worker runs one pack at a time: :func:`clear` starts each pack afresh.
"""

from __future__ import annotations

_reason: str | None = None


class WorkerStopping(RuntimeError):  # noqa: N818 (it is an interruption, not an error of the unit)
    """Raised in the running unit when its worker has been told to stop."""


def request_stop(reason: str) -> None:
    """Ask this worker to start no further unit, saying why."""
    global _reason
    _reason = reason


def stop_reason() -> str | None:
    """Why this worker was told to stop, or None while it may go on."""
    return _reason


def clear() -> None:
    """Forget an earlier stop (a pool worker that ran a stopped pack runs the next one)."""
    global _reason
    _reason = None
