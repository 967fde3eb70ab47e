"""Staging: a finished execution written as one Parquet file per table, the sentinel last.

A bundle lives at ``staging/{step number}_{step name}/{id[0:2]}/{id[2:4]}/{execution_run_id}/``;
function steps' bundles staged by an older stemma, at ``staging/{step name}/…``, are found and
recovered the same way. Every file is fsynced before ``executions.parquet`` appears (written
under a temporary name, then renamed), so a bundle holding the sentinel is complete, and one
without it was left by a writer that has not finished or died. The sentinel
(:mod:`stemma.storage.sentinel`) lists the tables staged beside it, so a bundle missing one of
them is refused rather than committed in part, the fields of any user-type content table, and
each table's row count, so a wave commit plans its reads from the sentinels alone. Staging holds
the bundle's lock (:func:`~stemma.storage.locks.bundle_lock`), so no committer reads a bundle
being written, and never touches Delta: workers may stage, only committers commit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from stemma.core.crash_points import crash_point
from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout
from stemma.storage.errors import StagedBundleError
from stemma.storage.execution_rows import execution_frames
from stemma.storage.locks import bundle_lock
from stemma.storage.retire import RETIRED
from stemma.storage.schemas import EXECUTIONS, TableSpec, commit_order
from stemma.storage.sentinel import SENTINEL, Listing, read_listing, sentinel_metadata
from stemma.storage.worker_logs import with_worker_logs

WAVES = ".waves"
"""The directory under ``staging`` that wave commits move their bundles into (``waves.py``)."""
QUARANTINE = ".quarantine"
"""The directory under ``staging`` that unreadable bundles are moved into (``quarantine.py``)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe(step_name: str) -> str:
    return _UNSAFE.sub("_", step_name).strip("._") or "step"


def _step_dir(layout: RootLayout, step_name: str) -> Path:
    return layout.staging / _safe(step_name)


def matches_step(directory: str, step_name: str) -> bool:
    """Whether a staging directory name is ``step_name``'s: ``{name}`` or ``{number}_{name}``."""
    return re.fullmatch(rf"(\d+_)?{re.escape(_safe(step_name))}", directory) is not None


def step_dirs(layout: RootLayout, step_name: str) -> list[Path]:
    """The staging directories of a step name: ``{name}`` and every ``{number}_{name}``."""
    return sorted(path for path in _dirs(layout.staging, 1) if matches_step(path.name, step_name))


def bundle_dir(layout: RootLayout, step_name: str, execution_run_id: str) -> Path:
    """Where the bundle of one execution is staged."""
    run = execution_run_id
    return _step_dir(layout, step_name) / run[0:2] / run[2:4] / run


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
    if not records:
        raise ValueError("stage_executions needs at least one record")
    first = records[0]
    frames = execution_frames(records)
    name = f"{first.step_number}_{first.step_name}"
    bundle = bundle_dir(layout, name, first.execution_run_id)
    _write_bundle(layout, bundle, frames)
    return bundle


def _write_bundle(layout: RootLayout, bundle: Path, frames: dict[TableSpec, pl.DataFrame]) -> None:
    ordered = commit_order(frames)
    metadata = sentinel_metadata(frames)
    with bundle_lock(layout, bundle):
        bundle.mkdir(parents=True, exist_ok=True)
        if (bundle / SENTINEL).exists():  # restaging: incomplete until the sentinel is back
            (bundle / SENTINEL).unlink()
            _fsync_directory(bundle)
            crash_point("staging.sentinel_removed")
        for spec in ordered:
            if spec is not EXECUTIONS:
                write_durably(frames[spec], bundle / spec.staged_name)
        # One point for all the tables: without its sentinel a bundle is incomplete however
        # many of them were written, and recovery treats every such bundle alike.
        crash_point("staging.tables")
        temporary = bundle / f"{SENTINEL}.tmp"
        write_durably(frames[EXECUTIONS], temporary, metadata=metadata)
        os.replace(temporary, bundle / SENTINEL)
        _fsync_directory(bundle)
        crash_point("staging.sentinel")


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


def staged_bundles(layout: RootLayout, step_name: str | None = None) -> list[Path]:
    """Every bundle directory under staging (or of one step name), complete or not, sorted.

    Bundles claimed by a wave commit (under ``staging/.waves``) are not listed: recovery finds
    them through their wave. Nor are quarantined ones.
    """
    if step_name is not None:
        return sorted(
            path for step_dir in step_dirs(layout, step_name) for path in _dirs(step_dir, 3)
        )
    tops = [top for top in _dirs(layout.staging, 1) if top.name not in (RETIRED, WAVES, QUARANTINE)]
    return sorted(path for top in tops for path in _dirs(top, 3))


def _dirs(base: Path, depth: int) -> list[Path]:
    """The directories ``depth`` levels below ``base``, tolerating concurrent removal.

    A committer renames and deletes bundles while recovery scans: a directory that vanishes
    mid-scan is simply not there (``glob`` would raise ``FileNotFoundError`` instead).
    """
    level = [base]
    for _ in range(depth):
        below: list[Path] = []
        for directory in level:
            try:
                with os.scandir(directory) as entries:
                    below.extend(Path(e.path) for e in entries if e.is_dir(follow_symlinks=False))
            except (FileNotFoundError, NotADirectoryError):
                continue
        level = below
    return level


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


def _fsync_directory(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return  # the bundle was committed and retired: its files were fsynced before that
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
