"""Recovery: commit what dead writers staged, and clear out what they left half-written.

Recovery runs at every start, so nothing it meets may stop it: a bundle with an unreadable
file is quarantined (``quarantine.py``) instead of raising, and the rest is committed.
"""

from __future__ import annotations

import time
from pathlib import Path

from stemma.core.store.locations import RootLayout
from stemma.storage.commit import commit_staged
from stemma.storage.errors import StagedBundleError
from stemma.storage.locks import bundle_lock
from stemma.storage.quarantine import quarantine_bundle
from stemma.storage.retire import clear_retired, retire_bundle
from stemma.storage.staging import is_complete, staged_bundles
from stemma.storage.staging_checks import (
    ProblemKind,
    StagingProblem,
    check_bundle,
    check_readable,
)
from stemma.storage.waves import recover_waves

INCOMPLETE_GRACE_SECONDS = 3600.0
"""How long a bundle without its sentinel is assumed to belong to a live writer."""


def recover_staged(
    layout: RootLayout,
    *,
    grace_seconds: float = INCOMPLETE_GRACE_SECONDS,
    now: float | None = None,
    step_name: str | None = None,
    shared: bool = False,
) -> int:
    """Commit every complete staged bundle and every wave a dead committer left under ``layout``.

    A bundle without ``executions.parquet`` is left alone while younger than ``grace_seconds``
    (its writer may still be writing) and deleted once older: its writer died mid-way and the
    execution will be rerun. A bundle with an unreadable file is quarantined at once; one whose
    sentinel lists a file that is not there is left alone while young (a shared filesystem may
    show it late) and quarantined once older. Leftovers of removals that crashed are cleared.

    Args:
        layout: the store root.
        grace_seconds: the age past which an incomplete bundle is deleted.
        now: the current time as a Unix timestamp; the wall clock when omitted.
        step_name: only the bundles of steps with this name; all when omitted.
        shared: the root is on a shared filesystem: a bundle's files are opened and read, and
            one not readable yet is left alone while young, like one not there
            (:mod:`stemma.core.store.staging.visibility`).

    Returns:
        How many bundles this call committed (bundles committed concurrently by another
        process are not counted).
    """
    current = time.time() if now is None else now
    # Waves first: an unsealed wave hands its bundles back to staging, committed just below.
    committed = recover_waves(layout, step_name)
    for bundle in staged_bundles(layout, step_name):
        if is_complete(bundle):
            committed += _recover_complete(
                layout, bundle, old=current - grace_seconds, shared=shared
            )
        elif current - _last_modified(bundle) > grace_seconds:
            _discard_incomplete(layout, bundle)
    if step_name is None:
        clear_retired(layout)
    return committed


def _recover_complete(layout: RootLayout, bundle: Path, *, old: float, shared: bool) -> int:
    """Commit a bundle holding its sentinel, or quarantine it if it cannot be read."""
    problem = check_bundle(bundle, shared=shared)
    if not isinstance(problem, StagingProblem):
        try:
            return int(commit_staged(layout, bundle))
        except StagedBundleError:
            problem = check_readable(bundle)  # which file, for the note
            if problem is None:
                raise
    if problem.kind is ProblemKind.CORRUPT or _last_modified(bundle) < old:
        with bundle_lock(layout, bundle):
            if bundle.is_dir():
                quarantine_bundle(layout, bundle, problem, bundle.parent.parent.parent.name)
    return 0


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
