"""Recovery: commit what dead processes staged, and clear out what they left half-written.

Recovery runs at every start, so nothing it meets may stop it: a bundle with an unreadable
file is quarantined instead of raising, and the rest is committed, a chunk of bundles per
transaction (so another process's writes wait for one chunk, not for the whole backlog).
Bundles staged by the Delta store (they hold ``executions.parquet``) are left for it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from stemma.core.store.locations import RootLayout
from stemma.core.store.sqlite.bundle_files import RECORDS, SENTINEL, Sentinel, check_bundle
from stemma.core.store.sqlite.bundle_removal import (
    clear_retired,
    quarantine_bundle,
    retire_bundles,
)
from stemma.core.store.sqlite.connections import Connections
from stemma.core.store.sqlite.staging import staged_bundles
from stemma.core.store.sqlite.wave_commit import Ready, commit_ready
from stemma.core.store.staging.problems import ProblemKind

INCOMPLETE_GRACE_SECONDS = 3600.0
"""How long a bundle without its sentinel is assumed to belong to a live writer."""
RECOVERY_CHUNK = 1000
"""Bundles committed per transaction by recovery."""


def recover_staged(
    layout: RootLayout,
    connections: Connections,
    *,
    step_name: str | None = None,
    grace_seconds: float = INCOMPLETE_GRACE_SECONDS,
    now: float | None = None,
    shared: bool = False,
) -> int:
    """Commit every complete bundle staged under ``layout``; return how many this call committed.

    A bundle without its sentinel is left alone while younger than ``grace_seconds`` (its writer
    may still be writing) and removed once older: its writer died mid-way and the execution will
    be rerun. A bundle with an unreadable sentinel or records is quarantined at once; one whose
    records file is not there is left alone while young (a shared filesystem may show it late)
    and quarantined once older. Leftovers of removals that crashed are cleared.

    Args:
        layout: the store root.
        connections: the store's database connections.
        step_name: only the bundles of steps with this name; all when omitted.
        grace_seconds: the age past which an incomplete bundle is removed.
        now: the current time as a Unix timestamp; the wall clock when omitted.
        shared: the root is on a shared filesystem: a bundle's files are opened and read, and
            one not readable yet is left alone like one not there
            (:mod:`stemma.core.store.staging.visibility`).
    """
    current = time.time() if now is None else now
    ready: Ready = {}
    abandoned: list[Path] = []
    for bundle in staged_bundles(layout, step_name):
        names = _file_names(bundle)
        if names is None or any(name.endswith(".parquet") for name in names):
            continue  # gone meanwhile, or the Delta store's
        step_dir = bundle.parent.parent.parent.name
        if SENTINEL not in names:
            if current - _last_modified(bundle) > grace_seconds:
                abandoned.append(bundle)
            continue
        checked = check_bundle(bundle, shared=shared)
        if isinstance(checked, Sentinel):
            ready[bundle] = (step_dir, checked)
        elif checked.kind is ProblemKind.CORRUPT or (
            checked.files == (RECORDS,) and current - _last_modified(bundle) > grace_seconds
        ):
            quarantine_bundle(layout, checked, step_dir)
    committed = _commit_in_chunks(layout, connections, ready)
    # (a writer that finished since it was listed holds its sentinel now: keep its bundle)
    retire_bundles(layout, [b for b in abandoned if not (b / SENTINEL).exists()], background=False)
    if step_name is None:
        clear_retired(layout)
    return committed


def _commit_in_chunks(layout: RootLayout, connections: Connections, ready: Ready) -> int:
    committed = 0
    items: Sequence[tuple[Path, tuple[str, Sentinel]]] = sorted(ready.items())
    for start in range(0, len(items), RECOVERY_CHUNK):
        chunk = dict(items[start : start + RECOVERY_CHUNK])
        committed += commit_ready(layout, connections, chunk, None).committed
    return committed


def _file_names(bundle: Path) -> set[str] | None:
    try:
        with os.scandir(bundle) as entries:
            return {entry.name for entry in entries}
    except (FileNotFoundError, NotADirectoryError):
        return None


def _last_modified(bundle: Path) -> float:
    """The newest modification time of the bundle or anything in it; now if it just vanished."""
    try:
        times = [bundle.stat().st_mtime]
        times.extend(path.stat().st_mtime for path in bundle.iterdir())
    except FileNotFoundError:
        return time.time()
    return max(times)
