"""Every run's live state, re-parsing only the state files that changed since the last read."""

from __future__ import annotations

import datetime as dt
import math
import os
import time
from pathlib import Path

from stemma.core.cli.run_rows import RunRow, row_from_state
from stemma.core.live import STALE_AFTER_SECONDS, RunState, RunStatus
from stemma.core.live.state import STATE_FILE

FINISHED_RECHECK_SECONDS = 10.0
"""How often a finished run's state file is looked at again (it may have been removed)."""


class LiveStates:
    """Reads ``{root}/runs/*/state.json`` like :func:`stemma.core.live.list_states`, cached.

    A refresh costs one ``stat`` per running or new run, and one per finished run every
    :data:`FINISHED_RECHECK_SECONDS` (a finished run's file is written for the last time; the
    stats of 1,000 of them each second were ~1% of a core on an idle runs list). Only files
    whose modification time changed are read and parsed again. Staleness is recomputed every
    time for running runs (it depends on the clock); a finished run's row is built once. A run
    directory removed is forgotten at the next refresh (the listing no longer has it).
    """

    def __init__(self, root: Path, *, stale_after: float = STALE_AFTER_SECONDS) -> None:
        self._runs = str(root / "runs")
        self._stale_after = stale_after
        self._cache: dict[str, tuple[int, RunState, RunRow | None]] = {}
        self._finished_checked_at = -math.inf

    def rows(self, newest: int | None = None) -> list[RunRow]:
        """One row per readable state file, as of now.

        Args:
            newest: read only this many state files, the most recently written (the runs a
                first screen shows), so a root with thousands of runs paints at once.
        """
        now = dt.datetime.now(dt.UTC)
        recheck = time.monotonic() - self._finished_checked_at >= FINISHED_RECHECK_SECONDS
        if recheck and newest is None:
            self._finished_checked_at = time.monotonic()
        stamped: list[tuple[int, str]] = []
        for path in self._paths():
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
        found: dict[str, tuple[int, RunState, RunRow | None]] = {}
        for stamp, path in stamped:
            cached = self._cache.get(path)
            if cached is None or cached[0] != stamp:
                try:
                    with open(path, encoding="utf-8") as handle:
                        state = RunState.from_json(handle.read())
                except (OSError, ValueError):
                    continue  # being replaced: the next refresh reads it
                final = None if state.status is RunStatus.RUNNING else row_from_state(state)
                cached = (stamp, state, final)
            found[path] = cached
        if newest is None:
            self._cache = found  # forgets the runs whose state files are gone
        else:
            self._cache.update(found)
        return [
            final or row_from_state(state.seen_at(now, self._stale_after))
            for _, state, final in found.values()
        ]

    def _paths(self) -> list[str]:
        try:
            with os.scandir(self._runs) as entries:
                return [os.path.join(e.path, STATE_FILE) for e in entries if e.is_dir()]
        except OSError:
            return []
