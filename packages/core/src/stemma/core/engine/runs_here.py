"""The runs this process started: what an attached ``stemma run`` follows.

The live state files say which process owns a run, but finding them means reading every run's
file under a root, and a script may open its pipeline on a root of its own; the process itself
knows both at no cost.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class StartedRun:
    """A run opened in this process."""

    root: Path
    """The root whose ``runs/`` holds its live state."""
    run_id: str
    """Its id."""


_lock = threading.Lock()
_started: list[StartedRun] = []


def note_run(root: Path, run_id: str) -> None:
    """Record that this process opened run ``run_id`` on ``root`` (called as its context opens)."""
    with _lock:
        _started.append(StartedRun(root=root, run_id=run_id))


def runs_started_here() -> tuple[StartedRun, ...]:
    """Every run opened in this process so far, oldest first."""
    with _lock:
        return tuple(_started)
