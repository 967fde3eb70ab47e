"""The crash cases of ``crash_cases`` on a root in S3: the tables and outputs read from the bucket.

The pipeline runs with its root at ``s3://{bucket}/{case}`` and its local half under the case's
directory (``$STEMMA_STATE_DIR``), so each case has a root of its own, on the real S3 server.
"""

from __future__ import annotations

import json
import pathlib
import signal

import polars as pl
from deltalake import DeltaTable

from stemma.core.store.locations import RootLayout
from stemma.storage.bucket_maintenance import bucket_tables
from tests.faults.crash_cases import (
    SENTINELS,
    CleanRun,
    Point,
    points_of,
    run_pipeline,
    staging_left,
)
from tests.faults.crash_tables import differences, duplicates, row_set
from tests.storage.object_roots.conftest import bucket_keys


def _local_half(state: pathlib.Path) -> pathlib.Path:
    [found] = [p for p in state.iterdir() if p.is_dir()]
    return found


def bucket_tables_of(state: pathlib.Path) -> dict[str, pl.DataFrame]:
    """Every Delta table of the root whose local half is under ``state``, read from the bucket."""
    return {
        place.name: pl.DataFrame(
            DeltaTable(place.uri, storage_options=place.options).to_pyarrow_table()
        )
        for place in bucket_tables(RootLayout(_local_half(state)))
    }


def bucket_out_files(url: str) -> dict[str, bytes]:
    """The function steps' outputs kept in the bucket, by key under ``outputs/``."""
    import obstore
    from obstore.store import from_url

    store = from_url(f"{url}/outputs")
    keys = [k.removeprefix("outputs/") for k in bucket_keys(url) if k.startswith("outputs/")]
    return {key: bytes(obstore.get(store, key).bytes()) for key in keys}


def bucket_clean_run(base: pathlib.Path, bucket: str) -> CleanRun:
    """The pipeline once on ``s3://{bucket}/{base.name}``, unkilled, listing its points."""
    base.mkdir(parents=True, exist_ok=True)
    url, state = f"s3://{bucket}/{base.name}", base / "state"
    state.mkdir()
    done = run_pipeline(url, "local", log=base / "points.log", state=state)
    assert done.returncode == 0, done.stderr[-3000:]
    return CleanRun(
        points=points_of(base / "points.log"),
        outputs=json.loads(done.stdout),
        tables=bucket_tables_of(state),
        out_files=bucket_out_files(url),
    )


def bucket_crash_case(base: pathlib.Path, bucket: str, point: Point, clean: CleanRun) -> list[str]:
    """Kill a run on a bucket root at ``point``, run it again; how it falls short of ``clean``."""
    base.mkdir(parents=True, exist_ok=True)
    url, state = f"s3://{bucket}/{base.name}", base / "state"
    state.mkdir()
    killed = run_pipeline(url, "local", log=base / "points.log", at=point.address, state=state)
    problems: list[str] = []
    if killed.returncode != -signal.SIGKILL:
        problems.append(f"the run was not killed there (exit {killed.returncode})")
    committed = bucket_tables_of(state)
    problems.extend(f"after the crash: {p}" for p in duplicates(committed))
    rerun = run_pipeline(url, "local", state=state)
    if rerun.returncode != 0:
        return [*problems, f"the rerun failed (exit {rerun.returncode}): {rerun.stderr[-3000:]}"]
    if json.loads(rerun.stdout) != clean.outputs:
        problems.append(f"the rerun offers other artifacts: {rerun.stdout.strip()}")
    after = bucket_tables_of(state)
    problems.extend(differences(after, clean.tables))
    for name, frame in committed.items():
        if not row_set(frame) <= row_set(after.get(name, frame.clear())):
            problems.append(f"{name} lost rows committed before the crash")
    problems.extend(staging_left(_local_half(state), SENTINELS["delta"]))
    if bucket_out_files(url) != clean.out_files:
        problems.append("the outputs kept in the bucket differ from a clean run's")
    return problems
