"""Retiring staged bundles: an atomic rename out of the staging tree, then removal.

A bundle is never deleted in place: a committer that reads it while another deletes it file by
file would see half a bundle. Instead it is renamed to ``staging/.retired/`` in one step (so every
reader sees either the whole bundle or none of it) and only then removed. Leftovers of a
removal that crashed or failed are cleared by :func:`clear_retired`.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from pathlib import Path

from stemma.core.crash_points import crash_point
from stemma.core.store.locations import RootLayout

RETIRED = ".retired"
"""The directory under ``staging`` retired bundles are moved to before they are removed."""


def retired_dir(layout: RootLayout) -> Path:
    """Where retired bundles wait to be removed: ``staging/.retired``."""
    return layout.staging / RETIRED


def retire_bundle(layout: RootLayout, bundle: Path, *, background: bool = False) -> bool:
    """Move ``bundle`` out of staging atomically, then remove it.

    Args:
        layout: the store root the bundle belongs to.
        bundle: the bundle directory.
        background: remove it in a (non-daemon) thread, for big waves whose thousands of files
            would otherwise hold up the caller; leftovers of an interrupted removal are cleared
            by :func:`clear_retired`.

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
    # Out of staging now: nothing reads it, so failing to remove it loses nothing.
    if background:
        threading.Thread(target=shutil.rmtree, args=(target, True), name="stemma-retire").start()
    else:
        shutil.rmtree(target, ignore_errors=True)
        crash_point("retire.removed")
    return True


def clear_retired(layout: RootLayout) -> None:
    """Remove whatever retired bundles a crashed or failed removal left behind."""
    try:
        leftovers = list(retired_dir(layout).iterdir())
    except FileNotFoundError:
        return
    for path in leftovers:
        shutil.rmtree(path, ignore_errors=True)
        crash_point("retire.cleared")
