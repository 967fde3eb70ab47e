"""Staging: a finished execution written as one Parquet file per table, the sentinel last.

A bundle lives at ``staging/{step name}/{id[0:2]}/{id[2:4]}/{execution_run_id}/``. Every file is
fsynced before ``executions.parquet`` appears (written under a temporary name, then renamed), so a
bundle holding the sentinel is complete, and one without it was left by a writer that has not
finished or died. Staging never touches Delta: workers may stage, only committers commit.
"""

# (polars' signatures name numpy types and numpy is not installed, so every polars method reads
# as partially unknown; arguments and results are still checked.)

from __future__ import annotations

import os
import re
from pathlib import Path

import polars as pl

from stemma.core.layout import RootLayout
from stemma.core.records import StepOutcome
from stemma.storage.errors import StagedBundleError
from stemma.storage.rows import outcome_frames
from stemma.storage.schemas import COMMIT_ORDER, EXECUTIONS, TableSpec

SENTINEL = EXECUTIONS.staged_name
"""The file whose presence marks a bundle complete: ``executions.parquet``."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def bundle_dir(layout: RootLayout, step_name: str, execution_run_id: str) -> Path:
    """Where the bundle of one execution is staged."""
    safe = _UNSAFE.sub("_", step_name).strip("._") or "step"
    return layout.staging / safe / execution_run_id[0:2] / execution_run_id[2:4] / execution_run_id


def stage_outcome(layout: RootLayout, outcome: StepOutcome) -> Path:
    """Write the bundle of one finished execution and return its directory.

    Staging the same outcome again rewrites the same bundle, which commits to the same rows.
    """
    bundle = bundle_dir(layout, outcome.started.step.name, outcome.execution_run_id)
    bundle.mkdir(parents=True, exist_ok=True)
    frames = outcome_frames(outcome)
    for spec in COMMIT_ORDER:
        if spec is not EXECUTIONS and spec in frames:
            _write_durably(frames[spec], bundle / spec.staged_name)
    temporary = bundle / f"{SENTINEL}.tmp"
    _write_durably(frames[EXECUTIONS], temporary)
    os.replace(temporary, bundle / SENTINEL)
    _fsync_directory(bundle)
    return bundle


def is_complete(bundle: Path) -> bool:
    """Whether ``bundle`` holds its sentinel (every other file was written before it)."""
    return (bundle / SENTINEL).is_file()


def read_bundle(bundle: Path) -> dict[TableSpec, pl.DataFrame]:
    """The staged rows of a complete bundle, per table, cast to each table's schema.

    Raises:
        StagedBundleError: the bundle has no sentinel, or a staged file cannot be read.
    """
    if not is_complete(bundle):
        raise StagedBundleError(
            f"{bundle} has no {SENTINEL}: its writer has not finished (or died); "
            "it cannot be committed"
        )
    frames: dict[TableSpec, pl.DataFrame] = {}
    for spec in COMMIT_ORDER:
        file = bundle / spec.staged_name
        if not file.is_file():
            continue
        try:
            frame = pl.read_parquet(file)
        except (OSError, pl.exceptions.PolarsError) as err:
            raise StagedBundleError(
                f"cannot read staged {spec.name} rows from {file}: {err}; remove the bundle "
                "directory if the execution should be rerun"
            ) from err
        frames[spec] = frame.cast(spec.polars_schema).select(spec.columns)
    return frames


def staged_bundles(layout: RootLayout) -> list[Path]:
    """Every bundle directory under staging, complete or not, in path order."""
    if not layout.staging.is_dir():
        return []
    return sorted(path for path in layout.staging.glob("*/*/*/*") if path.is_dir())


def _write_durably(frame: pl.DataFrame, path: Path) -> None:
    with path.open("wb") as stream:
        frame.write_parquet(stream, compression="zstd")
        stream.flush()
        os.fsync(stream.fileno())


def _fsync_directory(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
