"""Claiming a wave's bundles: each verified, moved into the wave under its lock, then sealed.

The first stage of a wave commit (see :mod:`stemma.storage.waves`). Each bundle is checked
(:func:`~stemma.storage.staging_checks.check_bundle`: one listing of its directory and its
sentinel's footer, whose tables and row counts the claim hands on, so the commit plans its
reads without opening another file) before it is moved: one whose files have not all appeared
yet is looked at again with exponential backoff, its lock released while waiting so its writer
can finish, up to a deadline shared by the whole wave, so a wave waits at most the staging
timeout however many bundles are late. Then:

- a whole bundle is moved into the wave by one atomic rename;
- a bundle with an unreadable sentinel is quarantined (``quarantine.py``);
- a bundle still incomplete at the deadline is left where it is (the next ``recover()`` commits
  it if it is whole by then), and a note is written to the failure log;
- a bundle that is gone because another committer has it (claimed by another wave, committed,
  or quarantined) is simply not this wave's.

The manifest, written last, seals the wave and records what was left out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from stemma.core.crash_points import crash_point
from stemma.core.execution_records import StepOutputs
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.notes import write_staging_note
from stemma.core.store.staging.problems import Backoff, ProblemKind, StagingProblem
from stemma.core.store.staging.removal import is_quarantined, quarantine_bundle, retire_bundle
from stemma.core.store.staging.tree import WAVES, bundle_dir, step_dir_of
from stemma.storage.execution_rows import step_outputs_frame
from stemma.storage.locks import bundle_lock
from stemma.storage.schemas import EXECUTIONS, STEP_OUTPUTS
from stemma.storage.sentinel import Listing
from stemma.storage.staging import write_durably
from stemma.storage.staging_checks import check_bundle
from stemma.storage.tables import read_table

MANIFEST = "wave.json"
"""The file whose presence seals a wave; lists its bundles relative to ``bundles/`` and the
problems of the bundles it left out."""
BUNDLES = "bundles"
"""The directory of a wave holding its claimed bundles, by step directory."""


def claim(
    layout: RootLayout,
    wave: Path,
    bundles: Sequence[Path],
    step_outputs: StepOutputs | None,
    timeout: float,
    *,
    shared: bool = False,
) -> dict[Path, Listing] | None:
    """Claim and seal a wave (the caller holds the wave's lock); ``None`` if it is empty.

    ``shared``: the root is on a shared filesystem; each bundle's files are opened and read
    (:mod:`stemma.core.store.staging.visibility`) instead of listed.

    Returns:
        Each claimed bundle's place in the wave, with what its sentinel lists: its tables and
        their rows (so the commit reads no sentinel or footer again to plan its reads).

    Raises:
        StagedBundleError: a bundle is not under ``staging/{step}/{ab}/{cd}/``.
    """
    claimed: dict[Path, Listing] = {}
    problems: list[StagingProblem] = []
    backoff = Backoff.for_timeout(timeout)
    targets: set[Path] = set()  # the wave's step directories made so far: one mkdir each
    try:
        for bundle in sorted({path.absolute() for path in bundles}):
            step_dir = wave / BUNDLES / step_dir_of(layout, bundle, reserved_ok=True)
            outcome = _claim_one(layout, bundle, step_dir, targets, backoff, shared)
            if isinstance(outcome, StagingProblem):
                problems.append(outcome)
            elif outcome is not None:
                claimed[outcome[0]] = outcome[1]
        if not claimed and step_outputs is None:
            unclaim(layout, wave, [])
            return None
        wave.mkdir(parents=True, exist_ok=True)
        if step_outputs is not None:
            write_durably(step_outputs_frame(step_outputs), wave / STEP_OUTPUTS.staged_name)
            crash_point("wave.outputs_staged")
        write_manifest(wave, list(claimed), problems)
    except BaseException:
        unclaim(layout, wave, list(claimed))
        raise
    return claimed


def write_manifest(wave: Path, claimed: Sequence[Path], problems: Sequence[StagingProblem]) -> None:
    """Write (or atomically replace) the manifest sealing ``wave``."""
    listed = [path.relative_to(wave / BUNDLES).as_posix() for path in claimed]
    temporary = wave / f"{MANIFEST}.tmp"
    temporary.write_text(
        json.dumps({"bundles": listed, "problems": [p.to_dict() for p in problems]})
    )
    os.replace(temporary, wave / MANIFEST)
    crash_point("wave.sealed")


def _claim_one(
    layout: RootLayout,
    bundle: Path,
    step_dir: Path,
    targets: set[Path],
    backoff: Backoff,
    shared: bool,
) -> tuple[Path, Listing] | StagingProblem | None:
    """The bundle's place in the wave and listing, the problem keeping it out, or None.

    ``step_dir`` is where the bundle goes in the wave; ``targets`` the step directories of the
    wave already made (this one is added once it is).
    """
    while True:
        with bundle_lock(layout, bundle):
            problem = check_bundle(bundle, shared=shared)
            if not isinstance(problem, StagingProblem):
                if step_dir not in targets:
                    step_dir.mkdir(parents=True, exist_ok=True)
                    targets.add(step_dir)
                target = step_dir / bundle.name
                os.rename(bundle, target)
                crash_point("wave.claimed")
                return target, problem
            if problem.kind is ProblemKind.CORRUPT:
                return quarantine_bundle(layout, bundle, problem, step_dir.name)
        if not bundle.is_dir() and _taken_elsewhere(layout, bundle, step_dir.name):
            return None
        if not backoff.wait():
            write_staging_note(layout, problem, step_dir.name)
            return problem


def _taken_elsewhere(layout: RootLayout, bundle: Path, step_dir: str) -> bool:
    """Whether a bundle that is gone was claimed, committed or quarantined by someone else."""
    if any((layout.staging / WAVES).glob(f"*/{BUNDLES}/{step_dir}/{bundle.name}")):
        return True
    if is_quarantined(layout, step_dir, bundle.name):
        return True
    committed = read_table(
        layout, EXECUTIONS, pl.col("execution_run_id") == bundle.name, ["execution_run_id"]
    )
    return not committed.is_empty()


def unclaim(layout: RootLayout, wave: Path, claimed: list[Path]) -> None:
    """Move claimed bundles back to where they were staged, then drop the unsealed wave."""
    for target in claimed:
        original = bundle_dir(layout, target.parent.name, target.name)
        with bundle_lock(layout, original):
            original.parent.mkdir(parents=True, exist_ok=True)
            os.rename(target, original)
        crash_point("wave.unclaimed")
    retire_bundle(layout, wave)
