"""A worker told to stop early: the unit running fails, the rest of its pack does not start.

A scheduler warns a job shortly before its time limit (SLURM sends the signal stemma-slurm asks
for, up to a minute earlier than asked). The backend's signal handler calls :func:`stop`: the
reason is recorded, and if a unit's operation is running (inside :func:`interruptible`), it is
interrupted with :class:`WorkerStopping`, which the operation's own ``except Exception`` cannot
swallow, and fails with that reason. Outside a unit nothing is raised, so the worker's own
bookkeeping (loading inputs, staging) is never cut short, and inside :func:`held` (restoring
file descriptors) the raise waits for the block's end. A pack checks :func:`stop_reason`
before each unit and, once stopped, records the rest as failed without loading or running
them. So the pack is staged, the units that finished are committed, the others are failures a
rerun retries, and none is lost to the hard kill that follows.

Process-wide state, as a worker runs one pack at a time: :func:`clear` resets it after a pack.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

_reason: str | None = None
_depth = 0
"""How many :func:`interruptible` blocks are open (a composite's inner units nest)."""
_held = 0
_pending = False
"""A stop arrived inside :func:`held`: raise when the held block ends."""


class WorkerStopping(BaseException):
    """Raised in the running unit when its worker has been told to stop.

    A ``BaseException``, like ``KeyboardInterrupt``: an operation's ``except Exception`` must not
    keep it running into the hard kill.
    """


def stop(reason: str) -> None:
    """Start no further unit, saying why; interrupt the unit running, if any.

    Meant for a signal handler: it runs between two bytecodes of the main thread.

    Raises:
        WorkerStopping: inside :func:`interruptible` (at the end of :func:`held` if in one).
    """
    global _reason, _pending  # one flag per worker process, set from a signal handler
    _reason = reason
    if _depth > 0:
        if _held > 0:
            _pending = True
        else:
            raise WorkerStopping(reason)


def stop_reason() -> str | None:
    """Why this worker was told to stop, or None while it may go on."""
    return _reason


def check() -> None:
    """Raise :class:`WorkerStopping` if a stop has been asked for (call it inside a unit).

    Raises:
        WorkerStopping: the worker was told to stop.
    """
    if _reason is not None:
        raise WorkerStopping(_reason)


@contextmanager
def interruptible() -> Generator[None]:
    """The block a stop interrupts: where a unit's operation runs."""
    global _depth, _pending
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            _pending = False


@contextmanager
def held() -> Generator[None]:
    """A block a stop must not cut in two (swapping file descriptors): the raise waits."""
    global _held, _pending
    _held += 1
    try:
        yield
    finally:
        _held -= 1
    if _held == 0 and _pending and _depth > 0:
        _pending = False
        raise WorkerStopping(_reason or "told to stop")


def clear() -> None:
    """Forget a stop (a pool worker that ran a stopped pack runs the next one)."""
    global _reason, _pending
    _reason = None
    _pending = False
