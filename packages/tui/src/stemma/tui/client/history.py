"""The history the dashboard shows, re-read only when a commit changed the steps table.

An idle refresh costs one ``stat`` of the table's ``_delta_log`` directory (a Delta commit adds
a file there, which changes its modification time), and a re-read at least every
:data:`MAX_AGE_SECONDS` in case a shared filesystem caches directory times.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from stemma.core.cli.run_rows import RunRow
from stemma.core.errors import StoreUnavailableError
from stemma.core.execution_records import StepEvent
from stemma.core.store import PipelineStore, open_pipeline_store
from stemma.storage.queries import steps
from stemma.tui.client.history_rows import rows_from_steps_table

STEPS_LOG = Path("delta") / "orchestration" / "steps" / "_delta_log"
MAX_AGE_SECONDS = 15.0
_KEPT_RUNS = 16
"""Runs whose events are kept between refreshes (the ones being looked at)."""


class HistoryCache:
    """Per-run rows and per-run events of one root, cached until the steps table changes.

    Safe to share between threads.
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._lock = threading.Lock()
        self._stamp: int | None = None
        self._read_at = 0.0
        self._rows: list[RunRow] = []
        self._events: dict[str, list[StepEvent]] = {}
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

    def rows(self) -> list[RunRow]:
        """One row per run in history."""
        self._refresh()
        return self._rows

    def run_events(self, run_id: str) -> list[StepEvent]:
        """The step events of one run, oldest first."""
        self._refresh()
        with self._lock:
            cached = self._events.get(run_id)
        if cached is not None:
            return cached
        store = self.store
        events = store.step_events(run_id) if store is not None else []
        with self._lock:
            if len(self._events) >= _KEPT_RUNS:
                self._events.pop(next(iter(self._events)))
            self._events[run_id] = events
        return events

    def _refresh(self) -> None:
        stamp = _stamp(self._root / STEPS_LOG)
        with self._lock:
            fresh = time.monotonic() - self._read_at < MAX_AGE_SECONDS
            if stamp == self._stamp and fresh:
                return
            rows = rows_from_steps_table(steps(self._root)) if stamp is not None else []
            self._rows, self._events, self._stamp = rows, {}, stamp
            self._read_at = time.monotonic()


def _stamp(log: Path) -> int | None:
    try:
        return os.stat(log).st_mtime_ns
    except OSError:
        return None
