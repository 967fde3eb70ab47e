"""What stemma leaves on a root besides its tables, and which of it a vacuum may remove.

- ``working/{N}_{op}/{ab}/{cd}/{execution}``: sandboxes kept by ``preserve_working=True`` (or
  by a worker that was killed). Only a live run uses a sandbox, so while one is live none is
  touched: a sandbox does not say which run made it.
- ``staging/.quarantine/{step}/{bundle}``: unreadable bundles, moved aside for someone to
  repair. Staged bundles themselves are never touched: they are results not yet committed
  (``recover()`` and ``stemma reap`` commit them).
- ``logs/…``: failure logs, staging notes, scheduler and detached-run output; a live run's
  scheduler logs (``logs/slurm/{run}``) are kept.

An entry counts as old when the newest file in it is older than the cutoff, so a sandbox a
worker is still writing into is never old.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.removal import quarantine_dir

_SANDBOX_DEPTH = 4  # {N}_{op}/{ab}/{cd}/{execution_run_id}
_BUNDLE_DEPTH = 2  # {step}/{bundle}


@dataclass(frozen=True, kw_only=True)
class Removal:
    """One file or directory a vacuum removes (or, in a dry run, would remove)."""

    kind: str
    """What it is: ``table {name}``, ``working``, ``quarantine``, ``logs``, ``contents`` or
    ``attempts`` (what a step that died wrote under ``OUT_URL`` in a bucket)."""
    path: Path | str
    """Where it is, absolute (a URL for a file in a bucket)."""
    size: int
    """Its bytes (a directory's: the sum of its files')."""


def leftovers(
    layout: RootLayout, cutoff: dt.datetime, *, live_run_ids: frozenset[str] = frozenset()
) -> list[Removal]:
    """The sandboxes, quarantined bundles and logs of ``layout`` last written before ``cutoff``.

    Args:
        layout: the root.
        cutoff: entries whose newest file is at least this old are listed (UTC).
        live_run_ids: runs live on the root; with any, sandboxes are left out entirely, and so
            are those runs' scheduler logs.
    """
    limit = cutoff.timestamp()
    found: list[Removal] = []
    if not live_run_ids:
        found += _old_entries("working", _at_depth(layout.working, _SANDBOX_DEPTH), limit)
    found += _old_entries("quarantine", _at_depth(quarantine_dir(layout), _BUNDLE_DEPTH), limit)
    live_logs = {layout.logs / "slurm" / run_id for run_id in live_run_ids}
    logs = [
        path
        for path in _files(layout.logs)
        if not any(path.is_relative_to(kept) for kept in live_logs)
    ]
    found += _old_entries("logs", logs, limit)
    return found


def remove(layout: RootLayout, removals: Iterable[Removal]) -> None:
    """Delete each entry (a missing one is fine), then the directories left empty by it."""
    tops = (layout.working, layout.logs, quarantine_dir(layout))
    for removal in removals:
        path = Path(removal.path)  # (the leftovers are this machine's files, never a URL)
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        _prune_empty_parents(path.parent, tops)


def _old_entries(kind: str, entries: Sequence[Path], limit: float) -> list[Removal]:
    old: list[Removal] = []
    for entry in sorted(entries):
        files = _files(entry) if entry.is_dir() else [entry]
        stats = [_stat(path) for path in files]
        newest = max((s.st_mtime for s in stats if s is not None), default=_mtime(entry))
        if newest < limit:
            old.append(Removal(kind=kind, path=entry, size=sum(s.st_size for s in stats if s)))
    return old


def _at_depth(top: Path, depth: int) -> list[Path]:
    level = [top] if top.is_dir() else []
    for _ in range(depth):
        level = [child for parent in level for child in _children(parent) if child.is_dir()]
    return level


def _children(directory: Path) -> list[Path]:
    try:
        return list(directory.iterdir())
    except OSError:
        return []  # removed meanwhile


def _files(top: Path) -> list[Path]:
    if not top.is_dir():
        return []
    return [Path(base) / name for base, _, names in os.walk(top) for name in names]


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def _mtime(path: Path) -> float:
    found = _stat(path)
    return found.st_mtime if found is not None else 0.0


def _prune_empty_parents(directory: Path, tops: Sequence[Path]) -> None:
    """Remove empty directories upwards, up to (not including) the top folder they are in."""
    while any(directory != top and directory.is_relative_to(top) for top in tops):
        try:
            directory.rmdir()
        except OSError:
            return  # not empty, or gone
        directory = directory.parent
