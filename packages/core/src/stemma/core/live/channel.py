"""``LiveChannel``: the thread that keeps a run's state file fresh and reads its control requests.

Every quarter second it looks for new cancel requests (so one is noticed well within a second);
once a second it rewrites the state file, which doubles as the heartbeat. A reader seeing a
heartbeat older than the stale timeout knows the orchestrator is gone.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path

from stemma.core.cancel_levels import CancelLevel
from stemma.core.live.control import pending_requests
from stemma.core.live.monitor import RunMonitor
from stemma.core.live.state import write_state
from stemma.core.store.locations import RootLayout

POLL_SECONDS = 0.25
WRITE_SECONDS = 1.0


class LiveChannel:
    """Writes ``monitor``'s snapshots under ``root`` and hands cancel requests to ``on_cancel``."""

    def __init__(
        self,
        root: Path,
        monitor: RunMonitor,
        on_cancel: Callable[[CancelLevel], None],
        *,
        write_seconds: float = WRITE_SECONDS,
    ) -> None:
        self._root = root
        self._monitor = monitor
        self._on_cancel = on_cancel
        self._write_seconds = write_seconds
        self._stop = threading.Event()
        self._seen_level = 0
        self._seen: set[str] = set()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Write the first state now, then keep it fresh on a daemon thread."""
        if self._thread is not None:
            return
        # A resumed run keeps its id: requests already on disk were for its earlier life.
        self._seen = {r.name for r in pending_requests(self._root, self._monitor.run_id)}
        try:
            write_state(self._root, self._monitor.snapshot())
        except OSError:
            if RootLayout(self._root).unwritable() is None:
                raise
            return  # a read-only root answers cached steps: unwatched, nothing to write
        self._thread = threading.Thread(target=self._loop, name="stemma-live", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and write the final state (status decided from the steps)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            write_state(self._root, self._monitor.snapshot(final=True))

    def _loop(self) -> None:
        run_id = self._monitor.run_id
        ticks_per_write = max(1, round(self._write_seconds / POLL_SECONDS))
        tick = 0
        while not self._stop.wait(POLL_SECONDS):
            tick += 1
            with contextlib.suppress(OSError, ValueError):  # a bad request must not end the run
                requests = pending_requests(self._root, run_id)
                fresh = [r for r in requests if r.name not in self._seen]
                requested = max((r.level for r in fresh), default=None)
                if requested is not None and requested > self._seen_level:
                    self._seen_level = int(requested)
                    self._on_cancel(requested)
            if tick % ticks_per_write == 0:
                with contextlib.suppress(OSError):  # a full disk: keep running, try again
                    write_state(self._root, self._monitor.snapshot())
