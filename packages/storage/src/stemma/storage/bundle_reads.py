"""The staged files of many bundles, per table, and their rows read together.

A wave's commit reads its bundles table by table: one parallel read of every bundle's file of
a table (:func:`read_files`), or, for a large wave, the same files cut into chunks
(:mod:`stemma.storage.wave_chunks`). Both start from :func:`staged_files`, which takes the
files and their row counts from the bundles' sentinels, as the wave's claim read them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from stemma.storage.schemas import EXECUTIONS, TableSpec
from stemma.storage.sentinel import Listing
from stemma.storage.staging import bundle_listing, read_staged_files
from stemma.storage.worker_logs import with_worker_logs


@dataclass(frozen=True)
class StagedFiles:
    """The staged files of a wave's bundles, per table, with the rows their sentinels record."""

    files: dict[TableSpec, list[Path]] = field(default_factory=dict[TableSpec, list[Path]])
    """Per table, its files in the bundles' order."""
    rows: dict[Path, int] = field(default_factory=dict[Path, int])
    """Each file's rows, as its bundle's sentinel records them; a file of a bundle staged
    before they were recorded is not here (its footer says)."""


def staged_files(
    bundles: Sequence[Path], checked: Mapping[Path, Listing] | None = None
) -> StagedFiles:
    """Per table, the staged files of ``bundles``, in their order, and their recorded rows.

    Args:
        bundles: the bundle directories.
        checked: what each bundle's sentinel lists, when the caller read it already (a wave's
            claim); the other bundles' sentinels are read here.

    Raises:
        StagedBundleError: a bundle has no sentinel, or a file it lists is missing.
    """
    staged = StagedFiles()
    for bundle in bundles:
        known = checked.get(bundle) if checked is not None else None
        listing = known if known is not None else bundle_listing(bundle)
        for spec in listing.tables:
            file = bundle / spec.staged_name
            staged.files.setdefault(spec, []).append(file)
            if listing.rows is not None:
                staged.rows[file] = listing.rows[spec]
    return staged


def read_files(
    files: Mapping[TableSpec, list[Path]], bundles: Sequence[Path]
) -> dict[TableSpec, pl.DataFrame]:
    """The rows of ``files`` per table, executions with the worker logs noted in ``bundles``.

    Raises:
        StagedBundleError: a file cannot be read.
    """
    frames = {spec: read_staged_files(spec, found) for spec, found in files.items()}
    if EXECUTIONS in frames:
        frames[EXECUTIONS] = with_worker_logs(frames[EXECUTIONS], bundles)
    return frames
