"""Recovery in the Delta store: what dead writers left, each bundle committed on its own.

Waves a dead committer left are finished first (:func:`~stemma.storage.waves.recover_waves`: an
unsealed wave hands its bundles back to staging). Then the staging protocol finds what is left
(:mod:`~stemma.core.store.staging.recovery`), and this store commits each whole bundle at once,
under its own transaction (:func:`~stemma.storage.commit.commit_staged`), and, under the bundle's
lock, quarantines an unreadable one (or one whose listed files have not come in the grace
period) and removes an abandoned one (unless its writer finished it meanwhile).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.problems import ProblemKind, StagedBundleError, StagingProblem
from stemma.core.store.staging.recovery import INCOMPLETE_GRACE_SECONDS, recover_bundles
from stemma.core.store.staging.removal import quarantine_bundle, retire_bundle
from stemma.storage.commit import commit_staged
from stemma.storage.locks import bundle_lock
from stemma.storage.sentinel import Listing
from stemma.storage.staging import DELTA_BUNDLES, is_complete
from stemma.storage.staging_checks import check_readable
from stemma.storage.waves import recover_waves

__all__ = ["INCOMPLETE_GRACE_SECONDS", "recover_staged"]


def recover_staged(
    layout: RootLayout,
    *,
    grace_seconds: float = INCOMPLETE_GRACE_SECONDS,
    now: float | None = None,
    step_name: str | None = None,
    shared: bool = False,
) -> int:
    """Commit every wave and every complete bundle a dead process left (see the module).

    Args:
        layout: the store root.
        grace_seconds: the age past which a bundle without its sentinel is deleted.
        now: the current time as a Unix timestamp; the wall clock when omitted.
        step_name: only the bundles of steps with this name; all when omitted.
        shared: the root is on a shared filesystem: staged files are opened and read, and one
            not readable yet counts as not there yet.

    Returns:
        How many bundles this call committed (bundles committed concurrently by another
        process are not counted).
    """
    current = time.time() if now is None else now
    # Waves first: an unsealed wave hands its bundles back to staging, committed just below.
    committed = recover_waves(layout, step_name)
    return committed + recover_bundles(
        layout,
        DELTA_BUNDLES,
        _Recovery(layout),
        step_name=step_name,
        grace_seconds=grace_seconds,
        now=current,
        shared=shared,
    )


class _Recovery:
    """This store's side of recovery: each bundle committed, or put aside, under its lock."""

    def __init__(self, layout: RootLayout) -> None:
        self._layout = layout

    def commit(self, bundle: Path, step_dir: str, sentinel: Listing) -> int | StagingProblem:
        try:
            return int(commit_staged(self._layout, bundle))
        except StagedBundleError:
            problem = check_readable(bundle)  # which file, for the note
            if problem is None:
                raise
            return problem

    def left_out(
        self, bundle: Path, step_dir: str, problem: StagingProblem, old: Callable[[], bool]
    ) -> None:
        if problem.kind is ProblemKind.CORRUPT or old():
            with bundle_lock(self._layout, bundle):
                if bundle.is_dir():
                    quarantine_bundle(self._layout, bundle, problem, step_dir)

    def abandon(self, bundle: Path) -> None:
        """Retire an abandoned bundle, unless its writer finished it while we awaited its lock."""
        with bundle_lock(self._layout, bundle):
            if not is_complete(bundle):
                retire_bundle(self._layout, bundle)

    def finish(self) -> int:
        return 0
