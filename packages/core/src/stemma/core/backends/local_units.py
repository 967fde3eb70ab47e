"""A unit on the local backend: the caller's future of it, and settling that future once.

The caller holds a :class:`LinkedFuture` for as long as the unit lives, while the pool's future
behind it may change: a unit taken down by another unit's dying worker is run again in a fresh
pool, and the link moves with it (``LocalBackend._settle_broken``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stemma.core.backends.base import WorkerCrashedError


class LinkedFuture(Future[Any]):
    """The caller's future of a unit: cancelling it cancels the pool's, or fails if running.

    A plain ``Future`` is never marked running, so ``cancel()`` would "succeed" on a unit a
    worker is executing, and its result would be lost. The link moves when the unit is run
    again in a fresh pool.
    """

    def __init__(self) -> None:
        super().__init__()
        self._inner: Future[Any] | None = None

    def link(self, inner: Future[Any]) -> None:
        """Follow ``inner``: the pool's future of the unit's current attempt."""
        self._inner = inner

    def cancel(self) -> bool:
        """Cancel the unit if the pool has not started it; False once a worker runs it."""
        return self._inner is not None and self._inner.cancel() and super().cancel()

    def cancel_now(self) -> None:
        """Mark cancelled whatever the pool's future says (it was dropped from the queue)."""
        super().cancel()


@dataclass(eq=False)
class UnitTask:
    """One caller's unit: what to run, its future, and where it is now."""

    fn: Callable[[Any], Any]
    payload: Any
    outer: LinkedFuture
    marker: Path
    """Where the worker that takes the unit writes its pid (``worker_deaths.marker_pid``)."""
    pool: ProcessPoolExecutor | None = None
    inner: Future[Any] | None = None
    """The pool's future of the current attempt; None while the unit is being moved."""
    resubmits: int = 0


def terminated_error() -> WorkerCrashedError:
    """What a unit fails with when a cancellation terminated its worker (or its pool)."""
    return WorkerCrashedError(
        "the worker was terminated by a cancellation", exit_codes=[], peak_rss_mb=None
    )


def settle_once(
    future: Future[Any], *, result: Any = None, error: BaseException | None = None
) -> None:
    """Set a caller's future unless something settled it first (a race we lose gracefully)."""
    with contextlib.suppress(InvalidStateError):
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
