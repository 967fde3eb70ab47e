"""The steps event log, re-read only when a commit changed it: idle refreshes cost one ``stat``."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from stemma.core.errors import StoreUnavailableError
from stemma.core.execution_records import StepEvent
from stemma.core.store import PipelineStore, open_pipeline_store

STEPS_LOG = Path("delta") / "orchestration" / "steps" / "_delta_log"
MAX_AGE_SECONDS = 15.0
"""Re-read at least this often anyway: a shared filesystem may cache directory times."""


class HistoryCache:
    """Every step event of a root, cached until the steps table's log gains a commit.

    A Delta commit adds a file to ``_delta_log``, which changes the directory's modification
    time; nothing else needs reading while it stays the same. Safe to share between threads.
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._read_at = 0.0
        self._events: list[StepEvent] = []
        self._by_run: dict[str, list[StepEvent]] = {}
        self._store: PipelineStore | None = None

    @property
    def store(self) -> PipelineStore | None:
        """The root's store, once it has tables (None before, or without stemma-storage)."""
        if self._store is None and (self._root / "delta").is_dir():
            try:
                self._store = open_pipeline_store(self._root)
            except StoreUnavailableError:
                return None
        return self._store

    def events(self) -> list[StepEvent]:
        """Every step event, oldest first."""
        self._refresh()
        return self._events

    def run_events(self, run_id: str) -> list[StepEvent]:
        """The step events of one run, oldest first."""
        self._refresh()
        return self._by_run.get(run_id, [])

    def _refresh(self) -> None:
        stamp = _stamp(self._root / STEPS_LOG)
        with self._lock:
            fresh = time.monotonic() - self._read_at < MAX_AGE_SECONDS
            if stamp == self._stamp and fresh:
                return
            store = self.store
            events = store.step_events() if store is not None and stamp is not None else []
            by_run: dict[str, list[StepEvent]] = {}
            for event in events:
                by_run.setdefault(event.pipeline_run_id, []).append(event)
            self._events, self._by_run, self._stamp = events, by_run, stamp
            self._read_at = time.monotonic()


def _stamp(log: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(log)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_nlink)
