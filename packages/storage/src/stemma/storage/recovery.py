"""Recovery: commit what dead writers staged, and clear out what they left half-written."""

from __future__ import annotations

import time
from pathlib import Path

from stemma.core.layout import RootLayout
from stemma.storage.commit import commit_staged
from stemma.storage.locks import bundle_lock
from stemma.storage.retire import clear_retired, retire_bundle
from stemma.storage.staging import is_complete, staged_bundles
from stemma.storage.waves import recover_waves

INCOMPLETE_GRACE_SECONDS = 3600.0
"""How long a bundle without its sentinel is assumed to belong to a live writer."""


def recover_staged(
    layout: RootLayout,
    *,
    grace_seconds: float = INCOMPLETE_GRACE_SECONDS,
    now: float | None = None,
    step_name: str | None = None,
) -> int:
    """Commit every complete staged bundle and every wave a dead committer left under ``layout``.

    A bundle without ``executions.parquet`` is left alone while younger than ``grace_seconds``
    (its writer may still be writing) and deleted once older: its writer died mid-way and the
    execution will be rerun. Leftovers of bundles whose removal crashed are cleared too.

    Args:
        layout: the store root.
        grace_seconds: the age past which an incomplete bundle is deleted.
        now: the current time as a Unix timestamp; the wall clock when omitted.
        step_name: only the bundles of steps with this name; all when omitted.

    Returns:
        How many bundles this call committed (bundles committed concurrently by another
        process are not counted).
    """
    current = time.time() if now is None else now
    # Waves first: an unsealed wave hands its bundles back to staging, committed just below.
    committed = recover_waves(layout, step_name)
    for bundle in staged_bundles(layout, step_name):
        if is_complete(bundle):
            committed += commit_staged(layout, bundle)
        elif current - _last_modified(bundle) > grace_seconds:
            _discard_incomplete(layout, bundle)
    if step_name is None:
        clear_retired(layout)
    return committed


def _discard_incomplete(layout: RootLayout, bundle: Path) -> None:
    """Retire an abandoned bundle, unless its writer finished it while we waited for its lock."""
    with bundle_lock(layout, bundle):
        if not is_complete(bundle):
            retire_bundle(layout, bundle)


def _last_modified(bundle: Path) -> float:
    """The newest modification time of the bundle or anything in it; now if it just vanished."""
    try:
        times = [bundle.stat().st_mtime]
        times.extend(path.stat().st_mtime for path in bundle.iterdir())
    except FileNotFoundError:
        return time.time()
    return max(times)
