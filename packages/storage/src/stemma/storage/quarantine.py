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

import datetime as dt
import os
import re
import uuid
from dataclasses import replace
from pathlib import Path

from stemma.core.layout import RootLayout
from stemma.storage.staging import QUARANTINE
from stemma.storage.staging_checks import StagingProblem

_NUMBERED = re.compile(r"(\d+)_(.+)")


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
    moved = replace(problem, moved_to=target)
    write_staging_note(layout, moved, step_dir)
    return moved


def write_staging_note(layout: RootLayout, problem: StagingProblem, step_dir: str) -> Path | None:
    """Write a readable note of a bundle left out of a commit; best effort.

    Returns:
        The note's path, or ``None`` if it could not be written (never raises ``OSError``).
    """
    path = staging_note_path(layout, step_dir, problem.bundle.name)
    what = (
        f"quarantined to {problem.moved_to}"
        if problem.moved_to is not None
        else "left in staging; the next recover() commits it if it is whole by then"
    )
    lines = [
        f"bundle: {problem.bundle}",
        f"problem: {problem.kind.value}",
        f"files: {', '.join(problem.files) or '(the whole bundle)'}",
        f"what was done: {what}",
        f"time: {dt.datetime.now(dt.UTC).isoformat()}",
        "",
        "--- error ---",
        problem.error,
        "",
    ]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
    except OSError:
        return None
    return path


def staging_note_path(layout: RootLayout, step_dir: str, bundle_name: str) -> Path:
    """``logs/failures/step_{N}_{step}/{bundle}.staging.log``, beside the step's failure logs."""
    numbered = _NUMBERED.fullmatch(step_dir)
    folder = f"step_{numbered[1]}_{numbered[2]}" if numbered else step_dir
    return layout.logs / "failures" / folder / f"{bundle_name}.staging.log"
