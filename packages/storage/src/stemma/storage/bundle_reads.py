"""The staged files of many bundles, per table, and their rows read together.

A wave's commit reads its bundles table by table: one parallel read of every bundle's file of
a table (:func:`read_files`), or, for a large wave, the same files cut into chunks
(:mod:`stemma.storage.wave_chunks`). Both start from :func:`staged_files`.
"""

# (polars' signatures name numpy types and numpy is not installed, so every polars method reads
# as partially unknown; arguments and results are still checked.)

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from stemma.storage.schemas import EXECUTIONS, TableSpec
from stemma.storage.staging import bundle_files, read_staged_files
from stemma.storage.worker_logs import with_worker_logs


def staged_files(
    bundles: Sequence[Path], checked: Mapping[Path, list[TableSpec]] | None = None
) -> dict[TableSpec, list[Path]]:
    """Per table, the staged files of ``bundles``, in their order.

    Raises:
        StagedBundleError: a bundle has no sentinel, or a file it lists is missing.
    """
    files: dict[TableSpec, list[Path]] = {}
    for bundle in bundles:
        known = checked.get(bundle) if checked is not None else None
        if known is not None:
            for spec in known:
                files.setdefault(spec, []).append(bundle / spec.staged_name)
            continue
        for spec, file in bundle_files(bundle).items():
            files.setdefault(spec, []).append(file)
    return files


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
