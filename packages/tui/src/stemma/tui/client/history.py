"""The history the dashboard shows, caught up only when a commit changed the steps table.

An idle refresh costs one ``stat`` of the table's ``_delta_log`` directory (a Delta commit adds
a file there, which changes its modification time), and a catch-up at least every
:data:`MAX_AGE_SECONDS` in case a shared filesystem caches directory times. A catch-up reads
only the files added since the last (:class:`~stemma.tui.client.steps_log.StepsLog`), and a
run's events come from the rows in memory, never from another scan of the table.

A root whose history is in ``core.sqlite`` (not imported into Delta:
:func:`~stemma.core.store.history_source.history_kind`, the rule every command follows) is read from
it whole, as the Delta steps table would hold it (:mod:`stemma.storage.sqlite_history`), when the
database or its write-ahead log changed: SQLite reads a root's few thousand events in
milliseconds. Nothing is imported or written.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

STEPS_LOG = Path("delta") / "orchestration" / "steps" / "_delta_log"
MAX_AGE_SECONDS = 15.0
BUCKET_REFRESH_SECONDS = 2.0
"""How often the history of a root in an object store is caught up (a listing of the steps
table's log, and a get per new file), where no ``stat`` says the table changed."""
MARKER = "object-root.json"
"""The marker of a root's local half (``stemma.core.store.local_half.MARKER``), named here to
keep the paint path light."""
_KEPT_RUNS = 16
"""Runs whose events are kept between refreshes (the ones being looked at)."""

if TYPE_CHECKING:
    import polars as pl

    from stemma.core.execution_records import StepEvent
    from stemma.core.runs.run_rows import RunRow
    from stemma.core.store import RunStore
    from stemma.core.store.history_source import HistoryKind
    from stemma.tui.client.eta import Paces
    from stemma.tui.client.steps_log import StepsLog


class HistoryCache:
    """Per-run rows and per-run events of one root, cached until the steps table changes.

    Safe to share between threads.
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._lock = threading.Lock()
        self._stamp: tuple[HistoryKind | None, tuple[int | None, ...]] | None = None
        self._read_at = 0.0
        self._log: StepsLog | None = None
        self._frame: pl.DataFrame | None = None
        self._rows: list[RunRow] = []
        self._by_run: dict[str, RunRow] = {}
        self._paces: Paces | None = None
        """None until asked for since the last catch-up: the runs list never needs them."""
        self._events: dict[str, list[StepEvent]] = {}
        self._store: tuple[HistoryKind, RunStore | None] | None = None

    @property
    def store(self) -> RunStore | None:
        """The store the root's history is in, to read (None before it has any).

        Opened again when that changes (a run imported ``core.sqlite`` into Delta).
        """
        # Here, not at module level: stemma.core.store loads the entry points' metadata
        # (~15 ms), which the first frame (painted from state files) does not need.
        from stemma.core.store.history_source import history_kind, open_history_store

        kind = history_kind(self._root)
        if kind is None:
            return None
        if self._store is None or self._store[0] != kind:
            self._store = (kind, open_history_store(self._root))
        return self._store[1]

    @property
    def files_read(self) -> int:
        """Steps-table data files read so far (0 before the first read)."""
        return self._log.files_read if self._log is not None else 0

    def rows(self) -> list[RunRow]:
        """One row per run in history."""
        self._refresh()
        return self._rows

    def paces(self) -> Paces:
        """Earlier completed steps' seconds per unit (for ETAs), averaged when first asked."""
        self._refresh()
        with self._lock:
            if self._paces is None:
                self._paces = _paces(self._frame)
            return self._paces

    def run_events(self, run_id: str) -> list[StepEvent]:
        """The step events of one run, oldest first."""
        self._refresh()
        with self._lock:
            cached = self._events.get(run_id)
            if cached is not None or self._frame is None:
                return cached or []
            events = _run_events(self._frame, run_id)
            if len(self._events) >= _KEPT_RUNS:
                self._events.pop(next(iter(self._events)))
            self._events[run_id] = events
        return events

    def explain_events(self, name: str) -> list[StepEvent]:
        """What ``explain_step`` reads to say why step ``name`` ran.

        Its events, and those of every step key upstream of them at any depth: to name the
        upstream steps and say what changed in them.
        """
        self._refresh()
        with self._lock:
            frame = self._frame
        return [] if frame is None else _explain_events(frame, name)

    def _refresh(self) -> None:
        from stemma.core.store.history_source import history_kind  # off the paint path: see store

        kind = history_kind(self._root)
        if kind == "sqlite":
            stamp = (kind, tuple(_stamp(self._root / name) for name in _sqlite_files()))
        elif (self._root / MARKER).is_file():  # the tables are in a bucket: no stat tells
            stamp = (kind, (int(time.monotonic() // BUCKET_REFRESH_SECONDS),))
        else:
            stamp = (kind, (_stamp(self._root / STEPS_LOG),))
        with self._lock:
            fresh = time.monotonic() - self._read_at < MAX_AGE_SECONDS
            if stamp == self._stamp and fresh:
                return
            if kind == "sqlite":
                self._log = None  # read whole each time: an import later starts Delta afresh
                frame = _sqlite_steps(self._root)
                self._by_run = _rows(frame, None, {})
                self._rows = list(self._by_run.values())
                self._frame, self._events, self._paces = frame, {}, None
            elif stamp[1][0] is not None:
                if self._log is None:
                    self._log = _steps_log(self._root)
                before = self._log.files_read
                frame = self._log.frame()
                if self._frame is None or self._log.files_read != before:
                    self._by_run = _rows(frame, self._log.added, self._by_run)
                    self._rows = list(self._by_run.values())
                    self._frame, self._events, self._paces = frame, {}, None
            self._stamp = stamp
            self._read_at = time.monotonic()


def _sqlite_files() -> tuple[str, str]:
    """What a SQLite commit changes: the database, or (in WAL mode) its write-ahead log."""
    # Imported here: the schema module loads sqlite3 (~2 ms), which the first frame does not use.
    from stemma.core.store.sqlite.schema import DATABASE_FILE

    return DATABASE_FILE, f"{DATABASE_FILE}-wal"


def _steps_log(root: Path) -> StepsLog:
    # Imported here: polars and delta-rs load on the first history read, off the paint path.
    from stemma.tui.client.steps_log import StepsLog

    return StepsLog(root)


def _sqlite_steps(root: Path) -> pl.DataFrame:
    # Imported here, as for the Delta log: polars loads on the first history read.
    from stemma.storage.queries import steps

    return steps(root)


def _rows(
    frame: pl.DataFrame, added: pl.DataFrame | None, known: dict[str, RunRow]
) -> dict[str, RunRow]:
    """Every run's row: only the runs the new rows touched are aggregated again."""
    import polars as pl

    from stemma.tui.client.history_rows import rows_from_steps_table

    if added is None:
        return {row.run_id: row for row in rows_from_steps_table(frame)}
    touched = added.get_column("pipeline_run_id").unique().to_list()
    fresh = rows_from_steps_table(frame.filter(pl.col("pipeline_run_id").is_in(touched)))
    return known | {row.run_id: row for row in fresh}


def _paces(frame: pl.DataFrame | None) -> Paces:
    from stemma.tui.client.eta import Paces
    from stemma.tui.client.history_rows import paces_from_steps_table

    return paces_from_steps_table(frame) if frame is not None else Paces()


def _run_events(frame: pl.DataFrame, run_id: str) -> list[StepEvent]:
    import polars as pl

    from stemma.storage.execution_rows import event_from_row

    rows = frame.filter(pl.col("pipeline_run_id") == run_id)
    return [event_from_row(row) for row in rows.iter_rows(named=True)]


def _explain_events(frame: pl.DataFrame, name: str) -> list[StepEvent]:
    import polars as pl

    from stemma.storage.execution_rows import event_from_row

    def upstream_of(rows: pl.DataFrame) -> set[str]:
        keys = rows.get_column("dep_fingerprints").explode().drop_nulls()
        return set(keys.to_list())

    own = pl.col("step_name") == name
    found = set[str]()
    wanted = upstream_of(frame.filter(own))
    while wanted:
        found |= wanted
        wanted = upstream_of(frame.filter(pl.col("step_spec_id").is_in(sorted(wanted)))) - found
    rows = frame.filter(own | pl.col("step_spec_id").is_in(sorted(found)))
    return [event_from_row(row) for row in rows.iter_rows(named=True)]


def _stamp(log: Path) -> int | None:
    try:
        return os.stat(log).st_mtime_ns
    except OSError:
        return None
