"""``WorkerSlots``: how many packs a run has out on a pool-like backend, across all its steps.

Steps dispatch side by side (a lazy graph's independent steps, a Pipeline's parallel steps).
Each step already keeps at most ``max_workers`` packs in flight; without a shared count, four
steps would hand a two-worker pool eight packs, and the pool would queue what it cannot run yet
beyond the reach of a cancel (a pool's queued call cannot be taken back once it is handed to a
worker's queue). With it, a pack leaves the orchestrator only when a worker is free for it, so a
graceful cancel stops exactly the work that had not started.
"""

from __future__ import annotations

import threading

WAIT_SECONDS = 0.5
"""How long a step with nothing in flight waits for a free slot before it looks again (for a
cancel, or a failure under ``fail_fast``)."""


class WorkerSlots:
    """A counting gate over the backend's workers; thread-safe."""

    def __init__(self, workers: int) -> None:
        """Start with ``workers`` free slots (at least one)."""
        self._free = max(1, workers)
        self._changed = threading.Condition()

    def take(self, wanted: int, *, wait: bool) -> int:
        """Take up to ``wanted`` free slots and return how many were taken (maybe 0).

        With ``wait``, block until at least one is free or :data:`WAIT_SECONDS` pass.
        """
        if wanted <= 0:
            return 0
        with self._changed:
            if wait and not self._free:
                self._changed.wait(WAIT_SECONDS)
            taken = min(wanted, self._free)
            self._free -= taken
            return taken

    def give(self, count: int = 1) -> None:
        """Give ``count`` slots back (their packs came back, or were never sent)."""
        if count <= 0:
            return
        with self._changed:
            self._free += count
            self._changed.notify_all()
