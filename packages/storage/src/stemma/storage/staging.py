"""Staging in the Delta store: the one staging protocol, with this store's bundle format.

A bundle lives at ``staging/{step number}_{step name}/{id[0:2]}/{id[2:4]}/{execution_run_id}/``
(:mod:`~stemma.core.store.staging.tree`); function steps' bundles staged by an older stemma, at
``staging/{step name}/…``, are found and recovered the same way. It holds one Parquet file per
table, ``executions.parquet`` the sentinel, written last (:mod:`~stemma.core.store.staging.
writing` keeps the order). The sentinel (:mod:`stemma.storage.sentinel`) lists the tables staged
beside it, so a bundle missing one of them is refused rather than committed in part, the fields
of any user-type content table, and each table's row count, so a wave commit plans its reads
from the sentinels alone. Staging holds the bundle's lock (:func:`~stemma.storage.locks.
bundle_lock`), so no committer reads a bundle being written, and never touches Delta: workers
may stage, only committers commit.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.bundle_format import BundleFiles, BundleFormat
from stemma.core.store.staging.problems import StagedBundleError
from stemma.core.store.staging.tree import WAVES, safe_name, staged_bundles
from stemma.core.store.staging.writing import stage_bundle
from stemma.storage.content_files import keep_large_contents
from stemma.storage.execution_rows import execution_frames
from stemma.storage.locks import bundle_lock
from stemma.storage.schemas import EXECUTIONS, TableSpec, commit_order
from stemma.storage.sentinel import SENTINEL, SHAPE, Listing, read_listing, sentinel_metadata
from stemma.storage.worker_logs import with_worker_logs

__all__ = [  # WAVES and staged_bundles are the staging tree's (every store's), named here too
    "DELTA_BUNDLES",
    "STAGED_ROW_GROUP",
    "WAVES",
    "bundle_files",
    "bundle_listing",
    "is_complete",
    "read_bundle",
    "read_staged_files",
    "stage_execution",
    "stage_executions",
    "staged_bundles",
    "write_durably",
]


@dataclass(frozen=True)
class _ParquetFiles:
    frames: dict[TableSpec, pl.DataFrame]
    ordered: Sequence[TableSpec]
    metadata: dict[str, str]

    def write_tables(self, bundle: Path) -> None:
        for spec in self.ordered:
            if spec is not EXECUTIONS:
                write_durably(self.frames[spec], bundle / spec.staged_name)

    def write_sentinel(self, bundle: Path) -> None:
        temporary = bundle / f"{SENTINEL}.tmp"
        write_durably(self.frames[EXECUTIONS], temporary, metadata=self.metadata)
        os.replace(temporary, bundle / SENTINEL)


def _encode(records: Sequence[ExecutionRecord]) -> BundleFiles:
    frames = execution_frames(records)
    return _ParquetFiles(frames, commit_order(frames), sentinel_metadata(frames))


DELTA_BUNDLES = BundleFormat[Listing](
    shape=SHAPE,
    step_dir=lambda number, name: safe_name(f"{number}_{name}"),
    encode=_encode,
    writing=bundle_lock,
    owns=lambda _names: True,
)
"""This store's bundles: ``{number}_{name}`` made safe as a whole, staged under the bundle's
lock (which every committer of a bundle takes); recovery takes every bundle, one without
``executions.parquet`` (a SQLite store's too) as incomplete."""


def stage_execution(layout: RootLayout, record: ExecutionRecord) -> Path:
    """Write the bundle of one execution unit and return its directory.

    Staging the same record again rewrites the same bundle, which commits to the same rows. The
    returned bundle may already be gone if a concurrent ``recover()`` committed it; committing it
    then reports it as already committed.
    """
    return stage_executions(layout, [record])


def stage_executions(layout: RootLayout, records: Sequence[ExecutionRecord]) -> Path:
    """Write one bundle holding a worker's pack of units; return it.

    A pack is units of one step run, or of several function steps packed together (the
    engine's ``function_packs``). Its units share one file per table: fewer files for the
    orchestrator to claim and read than one bundle per unit. The bundle is named after the
    first unit, and is committed or recovered whole.

    Raises:
        ValueError: no records.
    """
    return stage_bundle(layout, keep_large_contents(layout, records), DELTA_BUNDLES)


def is_complete(bundle: Path) -> bool:
    """Whether ``bundle`` holds its sentinel (every other file was written before it)."""
    return (bundle / SENTINEL).is_file()


def read_bundle(bundle: Path) -> dict[TableSpec, pl.DataFrame]:
    """The staged rows of a complete bundle, per table, cast to each table's schema.

    Raises:
        StagedBundleError: the bundle has no sentinel, a table the sentinel lists is missing, or
            a staged file cannot be read.
    """
    frames = {spec: _read_staged(spec, file) for spec, file in bundle_files(bundle).items()}
    frames[EXECUTIONS] = with_worker_logs(frames[EXECUTIONS], [bundle])
    return frames


def bundle_files(bundle: Path) -> dict[TableSpec, Path]:
    """The staged file of each table a complete bundle lists, every one checked to be there.

    Raises:
        StagedBundleError: the bundle has no sentinel, or a table its sentinel lists is missing.
    """
    return {spec: bundle / spec.staged_name for spec in bundle_listing(bundle).tables}


def bundle_listing(bundle: Path) -> Listing:
    """What a complete bundle's sentinel lists, every listed file checked to be there.

    Raises:
        StagedBundleError: the bundle has no sentinel, its sentinel is unreadable, or a table
            it lists is missing.
    """
    if not is_complete(bundle):
        raise StagedBundleError(
            f"{bundle} has no {SENTINEL}: its writer has not finished (or died); "
            "it cannot be committed"
        )
    listing = read_listing(bundle)
    for spec in listing.tables:
        if not (bundle / spec.staged_name).is_file():
            raise StagedBundleError(
                f"{bundle} lists {spec.name} in its {SENTINEL} but {spec.staged_name} is "
                "missing; remove the bundle directory if the execution should be rerun"
            )
    return listing


def read_staged_files(spec: TableSpec, files: list[Path]) -> pl.DataFrame:
    """The rows of many staged files of one table, read in parallel, cast to its schema.

    Raises:
        StagedBundleError: a file cannot be read.
    """
    if not files:
        return spec.empty()
    try:
        # The paths are files, never patterns: not globbing them saves a third of the read of
        # a thousand small files (and a bundle path holding ``[`` is read as it is).
        frame = pl.scan_parquet(files, glob=False).collect()
    except (OSError, pl.exceptions.PolarsError) as err:
        raise StagedBundleError(f"cannot read staged {spec.name} rows: {err}") from err
    # One chunk per file otherwise: converting a thousand-chunk frame to Arrow for Delta took
    # 20 times as long as rechunking it first.
    return frame.cast(spec.polars_schema).select(spec.columns).rechunk()


def _read_staged(spec: TableSpec, file: Path) -> pl.DataFrame:
    try:
        frame = pl.read_parquet(file)
    except (OSError, pl.exceptions.PolarsError) as err:
        raise StagedBundleError(
            f"cannot read staged {spec.name} rows from {file}: {err}; remove the bundle "
            "directory if the execution should be rerun"
        ) from err
    return frame.cast(spec.polars_schema).select(spec.columns)


STAGED_ROW_GROUP = 16_384
"""Rows per row group of a staged file: what a reader decodes at once."""


def write_durably(frame: pl.DataFrame, path: Path, metadata: dict[str, str] | None = None) -> None:
    """Write ``frame`` as zstd Parquet at ``path`` and fsync it before returning.

    Row groups are kept small so that a large staged file (a unit that made 10^6 artifacts) is
    read back a row group at a time by a chunked commit (:mod:`stemma.storage.wave_chunks`).
    """
    with path.open("wb") as stream:
        frame.write_parquet(
            stream, compression="zstd", metadata=metadata, row_group_size=STAGED_ROW_GROUP
        )
        stream.flush()
        os.fsync(stream.fileno())
