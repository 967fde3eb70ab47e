"""The readable note of a staged bundle a commit left out: beside the step's failure logs.

Written by every store's commit and recovery (the SQLite store here, the Delta store in
stemma-storage) when a bundle is quarantined or left waiting for late files, so a user finds
what happened to a unit's results where its failures are logged.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from stemma.core.store.locations import RootLayout, write_readable_log
from stemma.core.store.staging.problems import StagingProblem

_NUMBERED = re.compile(r"(\d+)_(.+)")
"""A run's staging directory of a step: ``{number}_{name}``."""


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
    return write_readable_log(path, lines)


def staging_note_path(layout: RootLayout, step_dir: str, bundle_name: str) -> Path:
    """``logs/failures/step_{N}_{step}/{bundle}.staging.log``, beside the step's failure logs."""
    numbered = _NUMBERED.fullmatch(step_dir)
    folder = f"step_{numbered[1]}_{numbered[2]}" if numbered else step_dir
    return layout.logs / "failures" / folder / f"{bundle_name}.staging.log"
