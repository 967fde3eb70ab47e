"""Committing a wave of staged bundles together: one Delta append per table per wave.

A wave is the bundles of one step (or a part of one) and, optionally, the step's outputs. Its id
is the xxh3_128 of its sorted ``execution_run_id``s (and the step run of its outputs), so
committing the same bundles again finds the same wave. The commit goes in three stages, each of
which a crash may interrupt without duplicating or losing a row:

1. **Claim**, under the wave's lock: each bundle, under its own lock, is moved by an atomic
   rename into ``staging/.waves/wave-{id}/bundles/{step dir}/{execution_run_id}`` (from which
   its staged path follows), then
   the step outputs are staged beside them, then ``wave.json`` listing the claimed bundles is
   written last, *sealing* the wave. A claimed bundle is no longer where ``recover()`` or
   ``commit_staged`` look, so no one commits it on its own. Bundles already gone were committed
   by someone else and are left out; an incomplete bundle stops the claim and every bundle
   claimed so far is moved back.
2. **Commit** the sealed wave: all its bundles read per table (one parallel read per table),
   concatenated, and appended once per table in commit order, each append carrying the wave's
   Delta application transaction ``stemma-wave-{id}``: a table that already holds it is skipped,
   and artifact rows are deduplicated by id within the wave and against the table.
3. **Retire** the wave directory (atomic rename out of staging, then removal).

Recovery (:func:`recover_waves`, run by ``recover()`` before single bundles) takes each wave's
lock: a sealed wave is committed again, which writes only the tables its transaction has not
reached; an unsealed wave (its claimer died while moving bundles, before any commit) has its
bundles moved back to where they were staged, to be committed one by one under their own
transactions. A bundle is thus committed under exactly one transaction: its wave's, if the wave
was sealed with it, else its own.
"""

# (polars' signatures name numpy types and numpy is not installed, so every polars method reads
# as partially unknown; arguments and results are still checked.)

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import polars as pl

from stemma.core.execution_records import StepOutputs
from stemma.core.identity import content_id
from stemma.core.layout import RootLayout
from stemma.storage.commit import commit_frames
from stemma.storage.errors import StagedBundleError
from stemma.storage.execution_rows import step_outputs_frame
from stemma.storage.locks import bundle_lock
from stemma.storage.retire import retire_bundle
from stemma.storage.schemas import STEP_OUTPUTS, TableSpec
from stemma.storage.staging import (
    WAVES,
    bundle_tables,
    is_complete,
    matches_step,
    read_staged_files,
    write_durably,
)

MANIFEST = "wave.json"
"""The file whose presence seals a wave; lists its bundles relative to ``bundles/``."""
_BUNDLES = "bundles"


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

    Idempotent: bundles already committed (here or by ``recover()``) are skipped, and a wave
    whose tables all hold its transaction writes nothing.

    Raises:
        StagedBundleError: a bundle is incomplete or unreadable; nothing is committed and every
            bundle stays where it was.
        CommitConflictError: a table kept conflicting; the sealed wave stays for ``recover()``.
    """
    if not bundles and step_outputs is None:
        return 0
    wave = layout.staging / WAVES / f"wave-{wave_id(bundles, step_outputs)}"
    with bundle_lock(layout, wave):
        if not (wave / MANIFEST).is_file() and not _claim(layout, wave, bundles, step_outputs):
            return 0
        return _commit_sealed(layout, wave)


def recover_waves(layout: RootLayout, step_name: str | None = None) -> int:
    """Finish every wave a dead committer left; return how many bundles this call committed."""
    committed = 0
    for wave in sorted(_children(layout.staging / WAVES)):
        if step_name is not None and not any(
            matches_step(path.name, step_name) for path in _children(wave / _BUNDLES)
        ):
            continue
        with bundle_lock(layout, wave):
            if not wave.is_dir():
                continue  # finished by another process while we waited
            if (wave / MANIFEST).is_file():
                committed += _commit_sealed(layout, wave)
            else:
                _unclaim(layout, wave, list((wave / _BUNDLES).glob("*/*")))
    return committed


def _claim(
    layout: RootLayout, wave: Path, bundles: Sequence[Path], step_outputs: StepOutputs | None
) -> bool:
    claimed: list[Path] = []
    made: set[Path] = set()
    try:
        for bundle in sorted({path.absolute() for path in bundles}):
            with bundle_lock(layout, bundle):
                if not bundle.is_dir():
                    continue  # committed by someone else
                if not is_complete(bundle):
                    raise StagedBundleError(
                        f"{bundle} has no sentinel: its writer has not finished (or died); "
                        "it cannot be committed"
                    )
                target = wave / _BUNDLES / _step_dir_name(layout, bundle) / bundle.name
                if target.parent not in made:
                    os.makedirs(target.parent, exist_ok=True)
                    made.add(target.parent)
                os.rename(bundle, target)
                claimed.append(target)
        if not claimed and step_outputs is None:
            _unclaim(layout, wave, [])
            return False
        wave.mkdir(parents=True, exist_ok=True)
        if step_outputs is not None:
            write_durably(step_outputs_frame(step_outputs), wave / STEP_OUTPUTS.staged_name)
        listed = [path.relative_to(wave / _BUNDLES).as_posix() for path in claimed]
        temporary = wave / f"{MANIFEST}.tmp"
        temporary.write_text(json.dumps({"bundles": listed}))
        os.replace(temporary, wave / MANIFEST)
    except BaseException:
        _unclaim(layout, wave, claimed)
        raise
    return True


def _unclaim(layout: RootLayout, wave: Path, claimed: list[Path]) -> None:
    """Move claimed bundles back to where they were staged, then drop the unsealed wave."""
    for target in claimed:
        run = target.name
        original = layout.staging / target.parent.name / run[0:2] / run[2:4] / run
        with bundle_lock(layout, original):
            original.parent.mkdir(parents=True, exist_ok=True)
            os.rename(target, original)
    retire_bundle(layout, wave)


def _commit_sealed(layout: RootLayout, wave: Path) -> int:
    listed = cast(list[str], json.loads((wave / MANIFEST).read_text())["bundles"])
    bundles = [wave / _BUNDLES / relative for relative in listed]
    frames = read_bundles(bundles)
    outputs = wave / STEP_OUTPUTS.staged_name
    if outputs.is_file():
        frames[STEP_OUTPUTS] = read_staged_files(STEP_OUTPUTS, [outputs])
    wrote = commit_frames(layout, frames, f"stemma-wave-{wave.name.removeprefix('wave-')}")
    retire_bundle(layout, wave, background=True)
    return len(bundles) if wrote else 0


def read_bundles(bundles: Sequence[Path]) -> dict[TableSpec, pl.DataFrame]:
    """The rows of many complete bundles, concatenated per table.

    Raises:
        StagedBundleError: a bundle has no sentinel, or a file it lists is missing or unreadable.
    """
    files: dict[TableSpec, list[Path]] = {}
    for bundle in bundles:
        if not is_complete(bundle):
            raise StagedBundleError(f"{bundle} has no sentinel; it cannot be committed")
        for spec in bundle_tables(bundle):
            file = bundle / spec.staged_name
            if not file.is_file():
                raise StagedBundleError(
                    f"{bundle} lists {spec.name} but {file.name} is missing; remove the bundle "
                    "directory if the execution should be rerun"
                )
            files.setdefault(spec, []).append(file)
    return {spec: read_staged_files(spec, found) for spec, found in files.items()}


def _step_dir_name(layout: RootLayout, bundle: Path) -> str:
    """The step directory a bundle was staged under (``staging/{step}/{ab}/{cd}/{id}``)."""
    parts = bundle.relative_to(layout.staging).parts
    if len(parts) != 4 or parts[1:3] != (bundle.name[0:2], bundle.name[2:4]):
        raise StagedBundleError(f"{bundle} is not a bundle staged under {layout.staging}")
    return parts[0]


def _children(path: Path) -> list[Path]:
    try:  # the wave may be retired by its committer while we look
        return list(path.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
