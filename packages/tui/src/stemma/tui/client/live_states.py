"""Every run's live state, re-parsing only the state files that changed since the last read."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from stemma.core.live import STALE_AFTER_SECONDS, RunState
from stemma.core.live.state import STATE_FILE


class LiveStates:
    """Reads ``{root}/runs/*/state.json`` like :func:`stemma.core.live.list_states`, cached.

    A refresh costs one ``stat`` per run; only files whose modification time changed are read
    and parsed again. Staleness is recomputed every time (it depends on the clock).
    """

    def __init__(self, root: Path, *, stale_after: float = STALE_AFTER_SECONDS) -> None:
        self._runs = root / "runs"
        self._stale_after = stale_after
        self._cache: dict[Path, tuple[int, RunState]] = {}

    def states(self) -> list[RunState]:
        """Every readable run state as of now, newest first."""
        now = dt.datetime.now(dt.UTC)
        found: dict[Path, tuple[int, RunState]] = {}
        paths = list(self._runs.glob(f"*/{STATE_FILE}")) if self._runs.is_dir() else []
        for path in paths:
            try:
                stamp = os.stat(path).st_mtime_ns
                cached = self._cache.get(path)
                if cached is not None and cached[0] == stamp:
                    found[path] = cached
                else:
                    found[path] = (stamp, RunState.from_json(path.read_text()))
            except (OSError, ValueError):
                continue  # being replaced: the next refresh reads it
        self._cache = found
        states = [state.seen_at(now, self._stale_after) for _, state in found.values()]
        return sorted(states, key=lambda state: state.started_at, reverse=True)
