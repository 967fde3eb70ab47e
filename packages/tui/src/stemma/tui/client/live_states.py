"""Every run's live state, re-reading only what changed since the last read.

An idle runs list asks for every run each second. On a root of 1,000 runs, listing the runs
folder, looking each run up and building the list again was most of the dashboard's idle CPU,
though almost always only the running runs could have changed. So a read lists the folder again
only when its modification time moved (a run added or removed), and then touches only the
running runs: their state files are looked at (one ``stat`` each) and their rows rebuilt.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import time
from pathlib import Path

from stemma.core.live import STALE_AFTER_SECONDS, RunState, RunStatus
from stemma.core.live.state import STATE_FILE
from stemma.core.runs.run_rows import RunRow, row_from_state

FINISHED_RECHECK_SECONDS = 10.0
"""How often every run is looked at again: a finished run's state file (written for the last
time, but it may be removed), and the folder's listing whatever its modification time says (a
network file system may cache a directory's time)."""
LISTING_MARGIN_NS = 1_000_000_000
"""A listing is trusted while the folder's time is unchanged only if that time is at least this
much older than the listing: file times tick coarsely (a few ms), so a run added just after a
listing, in the same tick, would leave the time unchanged and go unseen."""

_Entry = tuple[int, RunState, RunRow | None]
"""A state file's modification time, its state, and its row once the run has finished."""


class LiveStates:
    """Reads ``{root}/runs/*/state.json`` like :func:`stemma.core.live.list_states`, cached.

    A refresh costs one ``stat`` of the runs folder and one per running run; every
    :data:`FINISHED_RECHECK_SECONDS`, one per run and a listing of the folder. Only files whose
    modification time changed are read and parsed again. Staleness is recomputed every time for
    running runs (it depends on the clock); a row equal to the last one is the same object, so
    a caller can tell what changed by identity. A run directory removed is forgotten at the
    next refresh after the folder's time moved.
    """

    def __init__(self, root: Path, *, stale_after: float = STALE_AFTER_SECONDS) -> None:
        self._runs = str(root / "runs")
        self._stale_after = stale_after
        self._cache: dict[str, _Entry] = {}
        self._finished_checked_at = -math.inf
        self._listing: list[str] = []
        self._listed: tuple[int, int] | None = None
        """The folder's modification time at the last listing, and the clock just before it."""
        self._rows: list[RunRow] | None = None
        """The last full answer, in listing order (None: rebuild it at the next read)."""
        self._running: dict[str, int] = {}
        """State file → its row's index in :attr:`_rows`, for the runs last seen running."""
        self.version = 0
        """Goes up whenever a row of the answer changes (a new object in it): while it stays,
        :meth:`rows` hands back the same rows."""

    def rows(self, newest: int | None = None) -> list[RunRow]:
        """One row per readable state file, as of now (a new list each time).

        Args:
            newest: read only this many state files, the most recently written (the runs a
                first screen shows), so a root with thousands of runs paints at once.
        """
        if newest is not None:
            self._rows = None  # the cache may have moved past the kept answer
            return self._read(newest, recheck=False)
        recheck = time.monotonic() - self._finished_checked_at >= FINISHED_RECHECK_SECONDS
        if recheck:
            self._finished_checked_at = time.monotonic()
        listing_moved = self._list(again=recheck)
        if listing_moved or recheck or self._rows is None or not self._update_running():
            rows = self._read(None, recheck=recheck)
            if rows != self._rows:  # the same objects mostly: cheap unless something changed
                self.version += 1
            self._rows = rows
            self._running = {
                path: index
                for index, (path, entry) in enumerate(self._cache.items())
                if entry[2] is None
            }
        return list(self._rows)

    def _update_running(self) -> bool:
        """Rebuild the running runs' rows in :attr:`_rows`; False if a full read is needed.

        Needed when a running run's state file went away or its run ended (the folder's time
        moved too, or the rows change shape): the full read sorts it out.
        """
        assert self._rows is not None
        now = dt.datetime.now(dt.UTC)
        changed = False
        for path, index in self._running.items():
            try:
                stamp = os.stat(path).st_mtime_ns
            except OSError:
                return False  # its run directory was just removed
            old_stamp, state, _ = self._cache[path]
            if stamp != old_stamp:
                read = _read_state(path)
                if read is None or read.status is not RunStatus.RUNNING:
                    return False  # being replaced, or ended: the full read
                state = read
                self._cache[path] = (stamp, state, None)
            seen = row_from_state(state.seen_at(now, self._stale_after))
            row = self._kept(self._rows[index], seen)
            if row is not self._rows[index]:
                self._rows[index] = row
                changed = True
        if changed:
            self.version += 1
        return True

    def _read(self, newest: int | None, *, recheck: bool) -> list[RunRow]:
        """Stat, read and parse what changed; ``newest``: only that many of the newest files."""
        now = dt.datetime.now(dt.UTC)
        paths = self._listing if newest is None else self._scan()
        stamped: list[tuple[int, str]] = []
        for path in paths:
            cached = self._cache.get(path)
            if not recheck and cached is not None and cached[2] is not None:
                stamped.append((cached[0], path))  # finished: its file is not written again
                continue
            try:
                stamped.append((os.stat(path).st_mtime_ns, path))
            except OSError:
                continue  # its run directory was just removed
        if newest is not None:
            stamped = sorted(stamped, reverse=True)[:newest]
        found: dict[str, _Entry] = {}
        for stamp, path in stamped:
            cached = self._cache.get(path)
            if cached is None or cached[0] != stamp:
                state = _read_state(path)
                if state is None:
                    continue  # being replaced: the next refresh reads it
                final = None if state.status is RunStatus.RUNNING else row_from_state(state)
                cached = (stamp, state, final)
            found[path] = cached
        if newest is not None:
            self._cache.update(found)
            return [
                final or row_from_state(state.seen_at(now, self._stale_after))
                for _, state, final in found.values()
            ]
        kept = {row.run_id: row for row in self._rows or ()}
        self._cache = found  # forgets the runs whose state files are gone
        return [
            final
            or self._kept(
                kept.get(state.run_id), row_from_state(state.seen_at(now, self._stale_after))
            )
            for _, state, final in found.values()
        ]

    @staticmethod
    def _kept(old: RunRow | None, new: RunRow) -> RunRow:
        """``old`` when ``new`` says the same: a running run's row stays one object."""
        return old if old is not None and old == new else new

    def _list(self, *, again: bool) -> bool:
        """List the runs folder ``again``, or if its modification time moved; whether it did."""
        try:
            moved = os.stat(self._runs).st_mtime_ns
        except OSError:
            moved = None
        if (
            not again
            and moved is not None
            and self._listed is not None
            and moved == self._listed[0]
            and moved < self._listed[1] - LISTING_MARGIN_NS
        ):
            return False
        listed_at = time.time_ns()
        self._listing = self._scan()
        self._listed = None if moved is None else (moved, listed_at)
        return True

    def _scan(self) -> list[str]:
        try:
            with os.scandir(self._runs) as entries:
                return [os.path.join(e.path, STATE_FILE) for e in entries if e.is_dir()]
        except OSError:
            return []


def _read_state(path: str) -> RunState | None:
    """The state in ``path``; None while it cannot be read (being replaced, removed)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return RunState.from_json(handle.read())
    except (OSError, ValueError):
        return None
