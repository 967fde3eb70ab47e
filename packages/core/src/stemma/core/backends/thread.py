"""The ``local-thread`` backend: units run on threads of the orchestrator's own process.

For functions that cannot be pickled (a lambda, a closure, a function defined in a notebook
cell) and for tests. Nothing is isolated: a unit shares the orchestrator's memory, a crash takes
the run with it, and a running unit cannot be stopped (a force cancel drops only the queued ones).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from stemma.core.backends.base import WaveRequest
from stemma.core.cancel_levels import CancelLevel


class ThreadBackend:
    """Runs units on up to ``max_workers`` threads of this process."""

    name = "local-thread"
    queues_whole_waves = False

    def __init__(self, max_workers: int | None = None) -> None:
        """Prepare the threads (started on the first submit).

        Raises:
            ValueError: ``max_workers`` below 1.
        """
        if max_workers is not None and max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers or os.cpu_count() or 1
        self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="stemma-unit")

    def submit(self, fn: Callable[[Any], Any], payload: Any) -> Future[Any]:
        """Run ``fn(payload)`` on a thread."""
        return self._pool.submit(fn, payload)

    def submit_wave(
        self, fn: Callable[[Any], Any], payloads: Sequence[Any], request: WaveRequest
    ) -> list[Future[Any]]:
        """Submit every payload (the resources are this machine's; nothing to ask)."""
        del request
        return [self.submit(fn, payload) for payload in payloads]

    def cancel(self, level: CancelLevel) -> None:
        """From force up, drop the queued units; running ones finish (threads cannot be killed)."""
        if level >= CancelLevel.FORCE:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def shutdown(self, *, cancel_pending: bool = False) -> None:
        """Wait for running units and stop."""
        self._pool.shutdown(wait=True, cancel_futures=cancel_pending)

    def terminate(self, *, grace_seconds: float = 2.0) -> None:
        """Drop the queued units; running threads are left to finish (they cannot be killed)."""
        del grace_seconds
        self._pool.shutdown(wait=False, cancel_futures=True)
