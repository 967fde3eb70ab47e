"""Committing a wave of staged bundles together: one Delta append per table per wave.

A wave is the bundles of one step (or a part of one) and, optionally, the step's outputs. Its id
is the xxh3_128 of its sorted ``execution_run_id``s (and the step run of its outputs), so
committing the same bundles again finds the same wave. The commit goes in three stages, each of
which a crash may interrupt without duplicating or losing a row:

1. **Claim**, under the wave's lock (:mod:`stemma.storage.wave_claim`): each bundle, under its
   own lock, is verified (late files waited for with backoff, up to the staging timeout) and
   moved by an atomic rename into ``staging/.waves/wave-{id}/bundles/{step dir}/{id}`` (from
   which its staged path follows), then the step outputs are staged beside them, then
   ``wave.json`` listing the claimed bundles (and the problems of those left out) is written
   last, *sealing* the wave. A claimed bundle is no longer where ``recover()`` or
   ``commit_staged`` look, so no one commits it on its own. Bundles already gone were taken by
   someone else; a bundle still incomplete at the timeout stays in staging; one with an
   unreadable sentinel is quarantined.
2. **Commit** the sealed wave: all its bundles read per table (one parallel read per table,
   planned from the tables and row counts the claim read in each bundle's sentinel, so no other
   footer is opened to plan it), concatenated, and appended once per table in commit order,
   each append carrying the wave's Delta application transaction ``stemma-wave-{id}``: a table
   that already holds it is skipped, and artifact rows are deduplicated by id within the wave
   and against the table. If the read fails (a truncated or garbled file), each bundle is read
   on its own, the unreadable ones are quarantined, the wave is sealed again without them, and
   the rest commits. When bundles were left out, the step outputs keep only artifacts that are
   committed. A wave with a table of more staged rows than ``$STEMMA_COMMIT_CHUNK_ROWS`` is
   committed a chunk at a time instead, so it is never held whole
   (:mod:`stemma.storage.wave_chunks`); its staged files are still read once, the rows of a
   chunk of many files kept on disk in the wave's ``chunks/`` until appended
   (:mod:`stemma.storage.chunked_commit`).
3. **Retire** the wave directory (atomic rename out of staging, then removal).

Recovery (:func:`recover_waves`, run by ``recover()`` before single bundles) takes each wave's
lock: a sealed wave is committed again, which writes only the tables its transaction has not
reached; an unsealed wave (its claimer died while moving bundles, before any commit) has its
bundles moved back to where they were staged, to be committed one by one under their own
transactions. A bundle is thus committed under exactly one transaction: its wave's, if the wave
was sealed with it, else its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import polars as pl

from stemma.core.execution_records import StepOutputs
from stemma.core.identity import content_id
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.problems import (
    ProblemKind,
    StagedBundleError,
    StagingProblem,
    WaveReport,
    staging_timeout,
)
from stemma.core.store.staging.removal import quarantine_bundle, retire_bundle
from stemma.core.store.staging.tree import WAVES, bundle_dir, matches_step
from stemma.core.store.staging.worker_logs import read_worker_logs
from stemma.storage.bundle_reads import read_files, staged_files
from stemma.storage.chunked_commit import SPILL, commit_chunked, read_through
from stemma.storage.commit import commit_frames
from stemma.storage.locks import bundle_lock
from stemma.storage.schemas import ARTIFACT_INDEX, STEP_OUTPUTS, TableSpec
from stemma.storage.sentinel import Listing
from stemma.storage.staging import read_staged_files
from stemma.storage.staging_checks import check_readable
from stemma.storage.tables import read_table
from stemma.storage.wave_chunks import Piece, chunk_plan, commit_chunk_rows
from stemma.storage.wave_claim import BUNDLES, MANIFEST, claim, unclaim, write_manifest


def wave_id(bundles: Sequence[Path], step_outputs: StepOutputs | None = None) -> str:
    """The wave's id: xxh3_128 of its sorted bundle names and its outputs' step run."""
    names = sorted({bundle.name for bundle in bundles})
    if step_outputs is not None:
        names.append(f"outputs:{step_outputs.step_run_id}")
    return content_id("\n".join(names).encode())


def commit_wave(
    layout: RootLayout, bundles: Sequence[Path], step_outputs: StepOutputs | None = None
) -> int:
    """Commit ``bundles`` (and ``step_outputs``) as one wave; return how many bundles it wrote.

    See :func:`commit_wave_report`, which also says which bundles were left out.
    """
    return commit_wave_report(layout, bundles, step_outputs).committed


def commit_wave_report(
    layout: RootLayout,
    bundles: Sequence[Path],
    step_outputs: StepOutputs | None = None,
    *,
    timeout: float | None = None,
    shared: bool = False,
) -> WaveReport:
    """Commit ``bundles`` (and ``step_outputs``) as one wave; say what it wrote and left out.

    Idempotent: bundles already committed (here or by ``recover()``) are skipped, and a wave
    whose tables all hold its transaction writes nothing. Never blocks for longer than the
    staging timeout waiting for late files.

    Args:
        layout: the store root.
        bundles: the staged bundles (as the workers returned them).
        step_outputs: the step's outputs, committed in the same wave.
        timeout: how long to wait for late files, in seconds (see
            :func:`~stemma.storage.staging_checks.staging_timeout`).
        shared: the root is on a shared filesystem: staged files are opened and read, not
            listed (:mod:`stemma.core.store.staging.visibility`).

    Raises:
        StagedBundleError: a path is not a bundle under staging; nothing is committed.
        CommitConflictError: a table kept conflicting; the sealed wave stays for ``recover()``.
    """
    if not bundles and step_outputs is None:
        return WaveReport(committed=0)
    wait = staging_timeout(timeout)
    wave = layout.staging / WAVES / f"wave-{wave_id(bundles, step_outputs)}"
    with bundle_lock(layout, wave):
        if (wave / MANIFEST).is_file():  # sealed by an earlier, interrupted attempt
            return _commit_sealed(layout, wave)
        claimed = claim(layout, wave, bundles, step_outputs, wait, shared=shared)
        if claimed is None:
            return WaveReport(committed=0)
        return _commit_sealed(layout, wave, claimed)


def recover_waves(layout: RootLayout, step_name: str | None = None) -> int:
    """Finish every wave a dead committer left; return how many bundles this call committed."""
    committed = 0
    for wave in sorted(_children(layout.staging / WAVES)):
        if step_name is not None and not any(
            matches_step(path.name, step_name) for path in _children(wave / BUNDLES)
        ):
            continue
        with bundle_lock(layout, wave):
            if not wave.is_dir():
                continue  # finished by another process while we waited
            if (wave / MANIFEST).is_file():
                committed += _commit_sealed(layout, wave).committed
            else:
                unclaim(layout, wave, list((wave / BUNDLES).glob("*/*")))
    return committed


def _commit_sealed(
    layout: RootLayout, wave: Path, claimed: Mapping[Path, Listing] | None = None
) -> WaveReport:
    manifest = cast(dict[str, Any], json.loads((wave / MANIFEST).read_text()))
    problems = [StagingProblem.from_dict(p) for p in manifest.get("problems", [])]
    # A listed bundle no longer in the wave was quarantined by a commit that died before it
    # sealed the wave again (nothing had been appended yet): leave it out.
    bundles = [wave / BUNDLES / str(relative) for relative in manifest["bundles"]]
    bundles = [bundle for bundle in bundles if bundle.is_dir()]
    try:
        staged = _read(wave, bundles, claimed)
    except StagedBundleError:
        # No append has happened: a commit that got past this read found every file readable.
        unreadable = _quarantine_unreadable(layout, wave, bundles)
        if not unreadable:
            raise
        problems.extend(unreadable)
        bundles = [b for b in bundles if b.name not in {p.bundle.name for p in unreadable}]
        write_manifest(wave, bundles, problems)
        staged = _read(wave, bundles)
    transaction = f"stemma-wave-{wave.name.removeprefix('wave-')}"
    outputs = wave / STEP_OUTPUTS.staged_name
    if isinstance(staged, dict):
        frames = staged
        if outputs.is_file():
            frames[STEP_OUTPUTS] = read_staged_files(STEP_OUTPUTS, [outputs])
            if problems:
                frames[STEP_OUTPUTS] = _committed_only(layout, frames)
        wrote = commit_frames(layout, frames, transaction)
    else:  # a large wave: committed in chunks, never held whole
        plan = staged.plan
        if outputs.is_file():
            plan |= chunk_plan({STEP_OUTPUTS: [outputs]}, commit_chunk_rows())
        wrote = commit_chunked(
            layout,
            plan,
            transaction=transaction,
            worker_logs=read_worker_logs(bundles),
            only_committed_outputs=bool(problems),
            spilled=staged.spilled,
        )
    retire_bundle(layout, wave, background=True)
    return WaveReport(committed=len(bundles) if wrote else 0, problems=tuple(problems))


@dataclass(frozen=True)
class _Chunked:
    plan: dict[TableSpec, list[Piece]]
    spilled: dict[tuple[TableSpec, int], Path]
    """The pieces whose rows the read-through kept in the wave (``chunked_commit.py``)."""


def _read(
    wave: Path, bundles: Sequence[Path], checked: Mapping[Path, Listing] | None = None
) -> dict[TableSpec, pl.DataFrame] | _Chunked:
    """The wave's rows per table, or, when a table is too large to hold whole, its chunk plan.

    Either way every staged file has been read through once it returns.

    Raises:
        StagedBundleError: a bundle is incomplete, or a file cannot be read.
    """
    staged = staged_files(bundles, checked)
    plan = chunk_plan(staged.files, commit_chunk_rows(), staged.rows)
    if all(len(pieces) <= 1 for pieces in plan.values()):
        return read_files(staged.files, bundles)
    return _Chunked(plan, read_through(plan, wave / SPILL))


def _quarantine_unreadable(
    layout: RootLayout, wave: Path, bundles: Sequence[Path]
) -> list[StagingProblem]:
    """Read each bundle on its own; quarantine those that cannot be read."""
    found: list[StagingProblem] = []
    for bundle in bundles:
        problem = check_readable(bundle)
        if problem is None:
            continue
        step_dir = bundle.parent.name
        staged = bundle_dir(layout, step_dir, bundle.name)
        corrupt = StagingProblem(
            bundle=staged,
            kind=ProblemKind.CORRUPT,
            files=problem.files,
            error=problem.error.replace(str(bundle), f"{staged} (claimed in {wave.name})"),
        )
        found.append(quarantine_bundle(layout, bundle, corrupt, step_dir))
    return found


def _committed_only(layout: RootLayout, frames: dict[TableSpec, pl.DataFrame]) -> pl.DataFrame:
    """The step outputs without artifacts that neither this wave nor the store holds.

    A role left with no artifact keeps its one row with a null id, as an empty role has.
    """
    offered = frames[STEP_OUTPUTS]
    fresh = set(frames.get(ARTIFACT_INDEX, ARTIFACT_INDEX.empty()).get_column("artifact_id"))
    wanted = {i for i in offered.get_column("artifact_id").drop_nulls() if i not in fresh}
    known = read_table(
        layout, ARTIFACT_INDEX, pl.col("artifact_id").is_in(sorted(wanted)), ["artifact_id"]
    )
    present = fresh | set(known.get_column("artifact_id"))
    kept = offered.filter(pl.col("artifact_id").is_null() | pl.col("artifact_id").is_in(present))
    emptied = (
        offered.select("step_run_id", "role")
        .unique()
        .join(kept.select("step_run_id", "role").unique(), on=["step_run_id", "role"], how="anti")
    )
    nulls = emptied.with_columns(pl.lit(None, dtype=pl.String).alias("artifact_id"))
    return pl.concat([kept, nulls.select(offered.columns)], how="vertical")


def _children(path: Path) -> list[Path]:
    try:  # the wave may be retired by its committer while we look
        return list(path.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
