"""Recovery commits what a dead process staged, once, and clears what it half-wrote."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.store.sqlite import SqliteStore
from stemma.core.store.sqlite.connections import Connections
from stemma.core.store.sqlite.recovery import INCOMPLETE_GRACE_SECONDS, recover_staged

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]
PROCESS = Path(__file__).with_name("store_process.py")


def _executions(store: SqliteStore) -> list[str]:
    with contextlib.closing(sqlite3.connect(store.database)) as connection:
        rows = connection.execute("SELECT execution_run_id FROM executions").fetchall()
    return sorted(str(row[0]) for row in rows)


def test_recover_commits_once_what_a_killed_process_staged(tmp_path: Path) -> None:
    root = tmp_path / "root"
    with subprocess.Popen(
        [sys.executable, str(PROCESS), "stage", str(root), "5"], stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None
        bundles = [Path(p) for p in json.loads(child.stdout.readline())]
        child.kill()  # SIGKILL: it staged five bundles and committed none
        assert child.wait(timeout=60) == -9
    store = SqliteStore(root)
    assert not store.database.exists()

    assert store.recover() == 5
    assert store.recover() == 0

    assert _executions(store) == sorted(bundle.name for bundle in bundles)
    assert not any(bundle.exists() for bundle in bundles)
    assert len(store.executions_by_key([f"key-{i}" for i in range(5)])) == 5


def test_recover_by_step_name_commits_only_that_steps_bundles(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    score = store.stage_execution(make_record([make_metric(1)]))
    other = store.stage_execution(make_record(step_name="other", step_number=2))

    assert store.recover("missing") == 0
    assert store.recover("score") == 1
    assert not score.exists()
    assert other.is_dir()
    assert store.recover() == 1


def test_recover_leaves_a_young_incomplete_bundle_and_removes_an_old_one(
    store: SqliteStore, make_record: RecordFactory
) -> None:
    bundle = store.stage_execution(make_record())
    (bundle / "sentinel.json").unlink()  # its writer died before the sentinel

    assert store.recover() == 0
    assert bundle.is_dir()

    later = time.time() + INCOMPLETE_GRACE_SECONDS + 60
    assert recover_staged(store.layout, Connections(store.database), now=later) == 0
    assert not bundle.exists()
    assert not (store.layout.staging / ".retired").exists() or not any(
        (store.layout.staging / ".retired").iterdir()
    )


def test_recover_quarantines_a_bundle_whose_records_never_came_once_it_is_old(
    store: SqliteStore, make_record: RecordFactory
) -> None:
    bundle = store.stage_execution(make_record())
    (bundle / "records.json").unlink()

    assert store.recover() == 0
    assert bundle.is_dir()  # a shared filesystem may still show it

    later = time.time() + INCOMPLETE_GRACE_SECONDS + 60
    recover_staged(store.layout, Connections(store.database), now=later)
    assert (store.layout.staging / ".quarantine" / "1_score" / bundle.name).is_dir()


def test_recover_leaves_the_delta_stores_bundles_alone(store: SqliteStore) -> None:
    delta_bundle = store.layout.staging / "1_score" / "ab" / "cd" / ("abcd" + "1" * 28)
    delta_bundle.mkdir(parents=True)
    (delta_bundle / "executions.parquet").write_bytes(b"PAR1")
    old = time.time() - 2 * INCOMPLETE_GRACE_SECONDS
    os.utime(delta_bundle / "executions.parquet", (old, old))
    os.utime(delta_bundle, (old, old))

    assert store.recover() == 0

    assert (delta_bundle / "executions.parquet").is_file()
