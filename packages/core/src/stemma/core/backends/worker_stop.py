"""A worker told to stop early: the unit running fails, the rest of its pack does not start.

A scheduler warns a job shortly before its time limit (SLURM sends the signal stemma-slurm asks
for, up to a minute earlier than asked). The backend's signal handler calls :func:`stop`: the
reason is recorded, and if a unit's operation is running (inside :func:`interruptible`), it is
interrupted with :class:`WorkerStopping` and fails with that reason. Outside a unit nothing is
raised, so the worker's own bookkeeping (opening the store, staging) is never cut short. Each
unit checks :func:`stop_reason` before it starts and, once stopped, is recorded as failed
without running. So the pack is staged, the units that finished are committed, the others are
failures a rerun retries, and none is lost to the hard kill that follows.

Process-wide state, as a worker runs one pack at a time: :func:`clear` starts each pack afresh.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

_reason: str | None = None
_depth = 0
"""How many :func:`interruptible` blocks are open (a composite's inner units nest)."""


class WorkerStopping(RuntimeError):  # noqa: N818 (an interruption, not the unit's own error)
    """Raised in the running unit when its worker has been told to stop."""


def stop(reason: str) -> None:
    """Start no further unit, saying why; interrupt the unit running, if any.

    Meant for a signal handler: it runs between two bytecodes of the main thread.

    Raises:
        WorkerStopping: inside :func:`interruptible`.
    """
    global _reason  # one flag per worker process, set from a signal handler
    _reason = reason
    if _depth > 0:
        raise WorkerStopping(reason)


def stop_reason() -> str | None:
    """Why this worker was told to stop, or None while it may go on."""
    return _reason


@contextmanager
def interruptible() -> Generator[None]:
    """The block a stop interrupts: where a unit's operation runs."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


def clear() -> None:
    """Forget an earlier stop (a pool worker that ran a stopped pack runs the next one)."""
    global _reason
    _reason = None
