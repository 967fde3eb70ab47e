"""Staging: a finished execution written as one Parquet file per table, the sentinel last.

A bundle lives at ``staging/{step name}/{id[0:2]}/{id[2:4]}/{execution_run_id}/``. Every file is
fsynced before ``executions.parquet`` appears (written under a temporary name, then renamed), so a
bundle holding the sentinel is complete, and one without it was left by a writer that has not
finished or died. The sentinel lists the tables staged beside it, so a bundle missing one of them
is refused rather than committed in part. Staging holds the bundle's lock
(:func:`~stemma.storage.locks.bundle_lock`), so no committer reads a bundle being written, and
never touches Delta: workers may stage, only committers commit.
"""

# (polars' signatures name numpy types and numpy is not installed, so every polars method reads
# as partially unknown; arguments and results are still checked.)

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import cast

import polars as pl

from stemma.core.layout import RootLayout
from stemma.core.records import StepOutcome
from stemma.storage.errors import StagedBundleError
from stemma.storage.locks import bundle_lock
from stemma.storage.retire import RETIRED
from stemma.storage.rows import outcome_frames
from stemma.storage.schemas import COMMIT_ORDER, EXECUTIONS, TableSpec

SENTINEL = EXECUTIONS.staged_name
"""The file whose presence marks a bundle complete: ``executions.parquet``."""
TABLES_KEY = "stemma.staged_tables"
"""The sentinel's Parquet metadata key listing the bundle's tables, as a JSON array of names."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_BY_NAME = {spec.name: spec for spec in COMMIT_ORDER}


def _step_dir(layout: RootLayout, step_name: str) -> Path:
    return layout.staging / (_UNSAFE.sub("_", step_name).strip("._") or "step")


def bundle_dir(layout: RootLayout, step_name: str, execution_run_id: str) -> Path:
    """Where the bundle of one execution is staged."""
    run = execution_run_id
    return _step_dir(layout, step_name) / run[0:2] / run[2:4] / run


def stage_outcome(layout: RootLayout, outcome: StepOutcome) -> Path:
    """Write the bundle of one finished execution and return its directory.

    Staging the same outcome again rewrites the same bundle, which commits to the same rows. The
    returned bundle may already be gone if a concurrent ``recover()`` committed it; committing it
    then reports it as already committed.
    """
    bundle = bundle_dir(layout, outcome.started.step.name, outcome.execution_run_id)
    frames = outcome_frames(outcome)
    with bundle_lock(layout, bundle):
        bundle.mkdir(parents=True, exist_ok=True)
        if (bundle / SENTINEL).exists():  # restaging: incomplete until the sentinel is back
            (bundle / SENTINEL).unlink()
            _fsync_directory(bundle)
        for spec in COMMIT_ORDER:
            if spec is not EXECUTIONS and spec in frames:
                _write_durably(frames[spec], bundle / spec.staged_name)
        temporary = bundle / f"{SENTINEL}.tmp"
        listed = json.dumps([spec.name for spec in COMMIT_ORDER if spec in frames])
        _write_durably(frames[EXECUTIONS], temporary, metadata={TABLES_KEY: listed})
        os.replace(temporary, bundle / SENTINEL)
        _fsync_directory(bundle)
    return bundle


def is_complete(bundle: Path) -> bool:
    """Whether ``bundle`` holds its sentinel (every other file was written before it)."""
    return (bundle / SENTINEL).is_file()


def read_bundle(bundle: Path) -> dict[TableSpec, pl.DataFrame]:
    """The staged rows of a complete bundle, per table, cast to each table's schema.

    Raises:
        StagedBundleError: the bundle has no sentinel, a table the sentinel lists is missing, or
            a staged file cannot be read.
    """
    if not is_complete(bundle):
        raise StagedBundleError(
            f"{bundle} has no {SENTINEL}: its writer has not finished (or died); "
            "it cannot be committed"
        )
    frames: dict[TableSpec, pl.DataFrame] = {}
    for spec in _listed_tables(bundle):
        file = bundle / spec.staged_name
        if not file.is_file():
            raise StagedBundleError(
                f"{bundle} lists {spec.name} in its {SENTINEL} but {file.name} is missing; "
                "remove the bundle directory if the execution should be rerun"
            )
        frames[spec] = _read_staged(spec, file)
    return frames


def staged_bundles(layout: RootLayout, step_name: str | None = None) -> list[Path]:
    """Every bundle directory under staging (or of one step name), complete or not, sorted."""
    if step_name is not None:
        step_dir = _step_dir(layout, step_name)
        return sorted(path for path in step_dir.glob("*/*/*") if path.is_dir())
    if not layout.staging.is_dir():
        return []
    return sorted(
        path
        for path in layout.staging.glob("*/*/*/*")
        if path.relative_to(layout.staging).parts[0] != RETIRED and path.is_dir()
    )


def _listed_tables(bundle: Path) -> list[TableSpec]:
    sentinel = bundle / SENTINEL
    try:
        listed = pl.read_parquet_metadata(sentinel).get(TABLES_KEY)
    except (OSError, pl.exceptions.PolarsError) as err:
        raise StagedBundleError(f"cannot read the metadata of {sentinel}: {err}") from err
    try:
        decoded: object = json.loads(listed) if listed is not None else None
    except ValueError:
        decoded = None
    names = set(cast("list[object]", decoded)) if isinstance(decoded, list) else set[object]()
    if EXECUTIONS.name not in names or not names <= _BY_NAME.keys():
        raise StagedBundleError(
            f"{sentinel} does not list the bundle's tables under {TABLES_KEY!r} (found "
            f"{listed!r}); remove the bundle directory if the execution should be rerun"
        )
    return [spec for spec in COMMIT_ORDER if spec.name in names]


def _read_staged(spec: TableSpec, file: Path) -> pl.DataFrame:
    try:
        frame = pl.read_parquet(file)
    except (OSError, pl.exceptions.PolarsError) as err:
        raise StagedBundleError(
            f"cannot read staged {spec.name} rows from {file}: {err}; remove the bundle "
            "directory if the execution should be rerun"
        ) from err
    return frame.cast(spec.polars_schema).select(spec.columns)


def _write_durably(frame: pl.DataFrame, path: Path, metadata: dict[str, str] | None = None) -> None:
    with path.open("wb") as stream:
        frame.write_parquet(stream, compression="zstd", metadata=metadata)
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
