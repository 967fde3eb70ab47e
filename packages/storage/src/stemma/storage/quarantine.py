"""Quarantine: a staged bundle that cannot be read is moved aside, never deleted, and explained.

A corrupt bundle (a truncated or garbled Parquet file) would otherwise stop every commit and
every recovery that meets it. It is moved by one rename to
``staging/.quarantine/{step dir}/{execution_run_id}`` (out of every path a committer or
``recover()`` looks at), and a note naming the bundle, the file and the error is written beside
the step's failure logs: ``logs/failures/step_{N}_{step}/{execution_run_id}.staging.log``.
Someone who repairs the bundle can move it back under ``staging/`` and the next ``recover()``
commits it.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import replace
from pathlib import Path

from stemma.core.crash_points import crash_point
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.notes import write_staging_note
from stemma.storage.staging import QUARANTINE
from stemma.storage.staging_checks import StagingProblem


def quarantine_dir(layout: RootLayout) -> Path:
    """Where quarantined bundles are kept: ``staging/.quarantine``."""
    return layout.staging / QUARANTINE


def quarantine_bundle(
    layout: RootLayout, bundle: Path, problem: StagingProblem, step_dir: str
) -> StagingProblem:
    """Move ``bundle`` into quarantine (the caller holds its lock) and write its note.

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
    if target.exists():  # quarantined before, restaged, corrupt again: keep both
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
