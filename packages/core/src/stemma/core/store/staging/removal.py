"""Moving bundles out of staging: retired once committed, quarantined when unreadable.

Neither is ever a deletion in place: a committer reading a bundle that another deletes file by
file would see half of it. A committed bundle is renamed into ``staging/.retired`` in one step,
then removed (:func:`clear_retired` clears what a crashed removal left). An unreadable one is
renamed to ``staging/.quarantine/{step dir}/{execution_run_id}``, out of every path a commit or
``recover()`` looks at, with a note beside the step's failure logs; once repaired and moved back
under ``staging/``, the next ``recover()`` commits it. The SQLite store retires a wave's bundles
into one directory (:func:`retire_bundles`), the Delta store one bundle or wave directory at a
time (:func:`retire_bundle`).
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from stemma.core.crash_points import crash_point
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.notes import write_staging_note
from stemma.core.store.staging.problems import StagingProblem
from stemma.core.store.staging.tree import QUARANTINE, RETIRED


def retired_dir(layout: RootLayout) -> Path:
    """Where retired bundles wait to be removed: ``staging/.retired``."""
    return layout.staging / RETIRED


def quarantine_dir(layout: RootLayout) -> Path:
    """Where quarantined bundles are kept: ``staging/.quarantine``."""
    return layout.staging / QUARANTINE


def retire_bundles(layout: RootLayout, bundles: Iterable[Path], *, background: bool) -> int:
    """Move ``bundles`` out of staging into one directory, each by one rename; then remove it.

    Args:
        layout: the store root.
        bundles: bundle directories; those already gone are skipped.
        background: remove them in a (non-daemon) thread, so a wave of thousands of bundles
            does not hold up its caller.

    Returns:
        How many this call moved out.
    """
    target = retired_dir(layout) / uuid.uuid4().hex
    moved = 0
    for bundle in bundles:
        if moved == 0:
            target.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(bundle, target / bundle.name)
        except FileNotFoundError:
            continue  # retired by another committer of the same bundle
        crash_point("retire.renamed")
        moved += 1
    if moved == 0:
        shutil.rmtree(target, ignore_errors=True)
    else:
        _remove(target, background=background)
    return moved


def retire_bundle(layout: RootLayout, bundle: Path, *, background: bool = False) -> bool:
    """Move ``bundle`` (or a wave's directory) out of staging by one rename, then remove it.

    Args:
        layout: the store root the bundle belongs to.
        bundle: the directory.
        background: remove it in a (non-daemon) thread, for big waves whose thousands of files
            would otherwise hold up the caller.

    Returns:
        ``True`` if this call retired the bundle; ``False`` if it was already gone.
    """
    target = retired_dir(layout) / f"{bundle.name}-{uuid.uuid4().hex}"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(bundle, target)
    except FileNotFoundError:
        return False
    crash_point("retire.renamed")
    _remove(target, background=background)
    return True


def _remove(target: Path, *, background: bool) -> None:
    # Out of staging now: nothing reads it, so failing to remove it loses nothing.
    if background:
        threading.Thread(target=shutil.rmtree, args=(target, True), name="stemma-retire").start()
    else:
        shutil.rmtree(target, ignore_errors=True)
        crash_point("retire.removed")


def clear_retired(layout: RootLayout) -> None:
    """Remove whatever a crashed or failed removal left in ``staging/.retired``."""
    try:
        leftovers = list(retired_dir(layout).iterdir())
    except FileNotFoundError:
        return
    for path in leftovers:
        shutil.rmtree(path, ignore_errors=True)
        crash_point("retire.cleared")


def quarantine_bundle(
    layout: RootLayout, bundle: Path, problem: StagingProblem, step_dir: str
) -> StagingProblem:
    """Move ``bundle`` into quarantine and write its note.

    Args:
        layout: the store root.
        bundle: the bundle directory, where it is now (in staging, or claimed in a wave).
        problem: what is wrong with it; its ``bundle`` is where it was staged.
        step_dir: the staging directory of its step (``{N}_{step name}``).

    Returns:
        The problem with ``moved_to`` set (unset if the bundle was already gone).
    """
    target = quarantine_dir(layout) / step_dir / bundle.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():  # quarantined before, restaged, damaged again: keep both
        target = target.with_name(f"{bundle.name}-{uuid.uuid4().hex[:8]}")
    try:
        os.rename(bundle, target)
    except FileNotFoundError:
        return problem
    crash_point("quarantine.moved")
    moved = replace(problem, moved_to=target)
    write_staging_note(layout, moved, step_dir)
    crash_point("quarantine.noted")
    return moved


def is_quarantined(layout: RootLayout, step_dir: str, name: str) -> bool:
    """Whether a bundle of this step directory and name is in quarantine."""
    return (quarantine_dir(layout) / step_dir / name).exists()
