"""Recovery: what dead processes left in staging, found and handed to the store's commit.

Recovery runs at every start, so nothing it meets may stop it. Each bundle under staging (or
under one step name's directories) is looked at once, in order: another store's is left alone
(``BundleFormat.owns``); one without its sentinel is abandoned once older than the grace period
(its writer died mid-way; the execution will be rerun); a whole one is committed; one that
cannot be committed, now or when its commit finds a file unreadable, is the store's to
quarantine or leave for later. Then the leftovers of removals that crashed are cleared. The
store's :class:`Recovering` makes its writes, and so reaches its crash points, in that order.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from stemma.core.store.staging.problems import StagingProblem
from stemma.core.store.staging.removal import clear_retired
from stemma.core.store.staging.tree import staged_bundles
from stemma.core.store.staging.visibility import check_staged

if TYPE_CHECKING:
    from stemma.core.store.locations import RootLayout
    from stemma.core.store.staging.bundle_format import BundleFormat

S = TypeVar("S")
S_contra = TypeVar("S_contra", contravariant=True)

INCOMPLETE_GRACE_SECONDS = 3600.0
"""How long a bundle without its sentinel is assumed to belong to a live writer."""


class Recovering(Protocol[S_contra]):
    """How a store records what recovery hands it: its side of recovery."""

    def commit(self, bundle: Path, step_dir: str, sentinel: S_contra) -> int | StagingProblem:
        """Commit (or take, to commit in :meth:`finish`) a whole bundle.

        Returns:
            How many bundles this call committed, or what keeps the bundle from being committed
            (a file its commit found unreadable).
        """
        ...

    def left_out(
        self, bundle: Path, step_dir: str, problem: StagingProblem, old: Callable[[], bool]
    ) -> None:
        """Deal with a bundle that cannot be committed: quarantine it, or leave it for later.

        ``old()`` says whether the bundle was last modified before the grace period.
        """
        ...

    def abandon(self, bundle: Path) -> None:
        """Remove a bundle without its sentinel whose writer died, unless it is complete now."""
        ...

    def finish(self) -> int:
        """Once every bundle was looked at: how many more bundles this recovery committed."""
        ...


def recover_bundles(
    layout: RootLayout,
    fmt: BundleFormat[S],
    store: Recovering[S],
    *,
    step_name: str | None = None,
    grace_seconds: float = INCOMPLETE_GRACE_SECONDS,
    now: float | None = None,
    shared: bool = False,
) -> int:
    """Hand every bundle left in staging to ``store`` (see the module); how many it committed.

    Args:
        layout: the store root.
        fmt: the store's bundles.
        store: what the store does with each.
        step_name: only the bundles of steps with this name; all when omitted.
        grace_seconds: the age past which an incomplete bundle is abandoned.
        now: the current time as a Unix timestamp; the wall clock when omitted.
        shared: the root is on a shared filesystem: a bundle's files are opened and read, and
            one not readable yet counts as not there yet
            (:mod:`stemma.core.store.staging.visibility`).
    """
    current = time.time() if now is None else now
    sentinel = fmt.shape.sentinel
    committed = 0
    for bundle in staged_bundles(layout, step_name):
        names = _file_names(bundle)
        if names is None or not fmt.owns(names):
            continue  # gone meanwhile, or another store's

        def old(bundle: Path = bundle) -> bool:
            return current - last_modified(bundle) > grace_seconds

        if sentinel not in names:
            if old():
                store.abandon(bundle)
            continue
        step_dir = bundle.parent.parent.parent.name
        checked = check_staged(bundle, fmt.shape, shared=shared)
        if not isinstance(checked, StagingProblem):
            done = store.commit(bundle, step_dir, checked)
            if not isinstance(done, StagingProblem):
                committed += done
                continue
            checked = done
        store.left_out(bundle, step_dir, checked, old)
    committed += store.finish()
    if step_name is None:
        clear_retired(layout)
    return committed


def last_modified(bundle: Path) -> float:
    """The newest modification time of the bundle or anything in it; now if it just vanished."""
    try:
        times = [bundle.stat().st_mtime]
        times.extend(path.stat().st_mtime for path in bundle.iterdir())
    except FileNotFoundError:
        return time.time()
    return max(times)


def _file_names(bundle: Path) -> set[str] | None:
    try:
        with os.scandir(bundle) as entries:
            return {entry.name for entry in entries}
    except (FileNotFoundError, NotADirectoryError):
        return None
