"""Two processes committing on one root at once: no lost commit, no duplicate row."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.store.sqlite import SqliteStore

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]
PROCESS = Path(__file__).with_name("store_process.py")


def _count(store: SqliteStore, sql: str) -> int:
    with contextlib.closing(sqlite3.connect(store.database)) as connection:
        return int(connection.execute(sql).fetchone()[0])


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (slice(0, 30), slice(30, 60)),  # disjoint
        (slice(0, 60), slice(0, 60)),  # identical
        (slice(0, 40), slice(20, 60)),  # overlapping
    ],
)
def test_two_processes_commit_each_bundle_exactly_once(
    store: SqliteStore,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    tmp_path: Path,
    first: slice,
    second: slice,
) -> None:
    # every unit makes its own artifact and one shared by all
    bundles = [
        store.stage_execution(make_record([make_metric(i), make_metric(1000)])) for i in range(60)
    ]
    start = tmp_path / "start"
    commands = [
        [sys.executable, str(PROCESS), "commit", str(store.layout.root), str(start)]
        + [str(bundle) for bundle in bundles[part]]
        for part in (first, second)
    ]
    children = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for command in commands
    ]
    start.touch()  # both commit from here, at once
    outputs = [child.communicate(timeout=120) for child in children]

    assert [child.returncode for child in children] == [0, 0], outputs
    assert sum(int(out) for out, _ in outputs) == 60
    assert _count(store, "SELECT count(*) FROM executions") == 60
    assert _count(store, "SELECT count(DISTINCT execution_run_id) FROM executions") == 60
    assert _count(store, "SELECT count(*) FROM artifacts") == 61
    assert _count(store, "SELECT count(*) FROM execution_roles") == 60
    assert _count(store, "SELECT count(*) FROM committed_bundles") == 60
    assert not any(bundle.exists() for bundle in bundles)
