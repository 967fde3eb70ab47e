"""Moving bundles out of staging: retired once committed, quarantined when unreadable.

Neither is ever a deletion in place. A committed bundle is renamed into ``staging/.retired`` in
one step (so a reader sees the whole bundle or none of it), then removed; leftovers of a removal
that crashed are cleared by :func:`clear_retired`. An unreadable bundle is renamed to
``staging/.quarantine/{step dir}/{execution_run_id}`` (out of every path a commit or
``recover()`` looks at) and a note naming the bundle, the file and the error is written beside
the step's failure logs, ``logs/failures/step_{N}_{step}/{execution_run_id}.staging.log``, as
the Delta store does. Someone who repairs the bundle can move it back under ``staging/``; the
next ``recover()`` commits it.
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
from stemma.core.store.sqlite.staging import QUARANTINE, RETIRED
from stemma.core.store.staging.notes import write_staging_note
from stemma.core.store.staging.problems import StagingProblem


def retire_bundles(layout: RootLayout, bundles: Iterable[Path], *, background: bool) -> int:
    """Move ``bundles`` out of staging atomically, each by one rename, then remove them.

    Args:
        layout: the store root.
        bundles: bundle directories; those already gone are skipped.
        background: remove them in a (non-daemon) thread, so a wave of thousands of bundles
            does not hold up its caller.

    Returns:
        How many this call moved out.
    """
    target = layout.staging / RETIRED / uuid.uuid4().hex
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
    elif background:
        threading.Thread(target=shutil.rmtree, args=(target, True), name="stemma-retire").start()
    else:
        shutil.rmtree(target, ignore_errors=True)
        crash_point("retire.removed")
    return moved


def clear_retired(layout: RootLayout) -> None:
    """Remove whatever a crashed or failed removal left in ``staging/.retired``."""
    try:
        leftovers = list((layout.staging / RETIRED).iterdir())
    except FileNotFoundError:
        return
    for path in leftovers:
        shutil.rmtree(path, ignore_errors=True)
        crash_point("retire.cleared")


def quarantine_bundle(layout: RootLayout, problem: StagingProblem, step_dir: str) -> StagingProblem:
    """Move the bundle of ``problem`` into quarantine and write its note.

    Returns:
        The problem with ``moved_to`` set (unset if the bundle was already gone).
    """
    bundle = problem.bundle
    target = layout.staging / QUARANTINE / step_dir / bundle.name
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
    return (layout.staging / QUARANTINE / step_dir / name).exists()
