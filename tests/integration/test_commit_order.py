"""A step's commit lands content, then the index, then provenance, then the executions.

docs/concepts/store.md promises the order (the content tables, ``index``, ``artifact_edges``,
``execution_edges``, ``step_outputs``, ``steps``, ``executions``) so that a reader that sees an
execution row can see everything it refers to. On the Delta store each table's append is a
commit of its own: the order is read from the tables' logs after a real step, and an
orchestrator killed with SIGKILL after each of a wave's appends leaves the tables holding
exactly the first ones, readers that never see an execution without its artifacts, and a root
that ``recover()`` completes. The SQLite store commits a wave in one transaction: a kill inside
it leaves nothing of the wave visible, and ``recover()`` commits all of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys

import polars as pl
import pytest
from deltalake import DeltaTable

from stemma.core.store import open_run_store
from stemma.storage import artifacts, executions

RUNNER = pathlib.Path(__file__).with_name("commit_order_runner.py")
TRANSFORM = "example.transform"
DOCUMENTED_ORDER = (
    "content",  # artifacts/{type}: every table under artifacts/ but the index
    "artifacts/index",
    "provenance/artifact_edges",
    "provenance/execution_edges",
    "orchestration/step_outputs",
    "orchestration/steps",
    "orchestration/executions",
)
TRANSFORM_WAVE = (
    "artifacts/data",
    "artifacts/index",
    "provenance/artifact_edges",
    "provenance/execution_edges",
    "orchestration/step_outputs",
    "orchestration/executions",
)
"""The tables the transform step's wave appends to: one per stage of the documented order."""


def _run(root: pathlib.Path, journal: pathlib.Path, *kill: str, store: str = "delta") -> int:
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(root), str(journal), *kill],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**os.environ, "STEMMA_STORE": store},
    )
    if done.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(done.stderr[-3000:])
    return done.returncode


def _stage(table: str) -> int:
    """Where a table comes in the documented order."""
    if table.startswith("artifacts/") and table != "artifacts/index":
        return DOCUMENTED_ORDER.index("content")
    return DOCUMENTED_ORDER.index(table)


def _waves(journal: pathlib.Path) -> list[str]:
    """The wave transactions the runner appended under, in order."""
    found: list[str] = []
    for line in journal.read_text().splitlines():
        transaction = json.loads(line)["transaction"]
        if transaction.startswith("stemma-wave-") and transaction not in found:
            found.append(transaction)
    return found


def _versions(root: pathlib.Path, transaction: str) -> dict[str, list[int]]:
    """Per table, the versions of its Delta log that carry ``transaction`` (read from the log)."""
    found: dict[str, list[int]] = {}
    for log in sorted((root / "delta").glob("*/*/_delta_log")):
        table = log.parent.relative_to(root / "delta").as_posix()
        for commit in sorted(log.glob("*.json")):
            actions = [json.loads(line) for line in commit.read_text().splitlines()]
            if any(a.get("txn", {}).get("appId") == transaction for a in actions):
                found.setdefault(table, []).append(int(commit.stem))
    return found


def _assert_readers_see_whole_executions(root: pathlib.Path) -> pl.DataFrame:
    """Every execution a reader sees has its inputs and outputs in the index, with content."""
    seen = executions(root)
    indexed = set(artifacts(root).get_column("artifact_id").to_list())
    store = open_run_store(root, kind="delta")
    records = store.executions_by_key(seen.get_column("execution_spec_id").to_list())
    assert len(records) == seen.select("execution_spec_id").n_unique()
    for record in records.values():
        named = {i for ids in (*record.inputs.values(), *record.outputs.values()) for i in ids}
        assert named <= indexed, f"{record.step_name} names artifacts the index lacks"
        loaded = store.load_artifacts(named)
        assert set(loaded) == named
        assert all(artifact.content is not None for artifact in loaded.values())
    return seen


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, str]:
    """A root the runner completed, and the transform wave's transaction."""
    base = tmp_path_factory.mktemp("order")
    assert _run(base / "root", base / "journal") == 0
    first, transform = _waves(base / "journal")
    assert first != transform
    return base / "root", transform


def test_step_commit_appends_each_table_once_in_the_documented_order(
    clean: tuple[pathlib.Path, str],
) -> None:
    root, transaction = clean
    versions = _versions(root, transaction)
    assert sorted(versions) == sorted(TRANSFORM_WAVE)
    assert all(len(found) == 1 for found in versions.values())  # one append per table
    stamps = {
        table: next(
            entry["timestamp"]
            for entry in DeltaTable(str(root / "delta" / table)).history()
            if entry["version"] == found[0]
        )
        for table, found in versions.items()
    }
    by_order = sorted(stamps, key=_stage)
    # Commit timestamps are milliseconds: two appends may share one, never go backwards.
    assert [stamps[t] for t in by_order] == sorted(stamps.values())
    assert stamps["orchestration/executions"] > stamps["artifacts/data"]


@pytest.mark.parametrize("appended", range(1, len(TRANSFORM_WAVE)))
def test_kill_9_after_each_append_leaves_no_execution_without_its_artifacts_and_recover_completes(
    tmp_path: pathlib.Path, appended: int
) -> None:
    root, journal = tmp_path / "root", tmp_path / "journal"

    assert _run(root, journal, "wave", "2", str(appended)) == -signal.SIGKILL

    transaction = _waves(journal)[1]
    assert set(_versions(root, transaction)) == set(TRANSFORM_WAVE[:appended])
    seen = _assert_readers_see_whole_executions(root)
    assert seen.filter(pl.col("step_name") == TRANSFORM).is_empty()

    assert open_run_store(root, kind="delta").recover() == 3  # the wave's three bundles

    versions = _versions(root, transaction)
    assert sorted(versions) == sorted(TRANSFORM_WAVE)
    assert all(len(found) == 1 for found in versions.values())  # nothing appended twice
    seen = _assert_readers_see_whole_executions(root)
    transformed = seen.filter(pl.col("step_name") == TRANSFORM)
    assert transformed.height == 3
    assert transformed.get_column("success").all()


def _sqlite_rows(root: pathlib.Path) -> dict[str, int]:
    """What a reader of ``core.sqlite`` sees of the transform step's wave, per table.

    Only the transform step makes artifact edges and offers role ``dataset``; the generate
    step's wave commits one bundle.
    """
    queries = {
        "executions": f"SELECT count(*) FROM executions WHERE step_name = '{TRANSFORM}'",
        "artifacts": f"SELECT count(*) FROM artifacts WHERE origin_step_name = '{TRANSFORM}'",
        "artifact_edges": "SELECT count(*) FROM artifact_edges",
        "step_outputs": "SELECT count(*) FROM step_outputs WHERE role = 'dataset'",
        "committed_bundles": "SELECT count(*) FROM committed_bundles",
    }
    with contextlib.closing(sqlite3.connect(root / "core.sqlite")) as connection:
        return {table: int(connection.execute(sql).fetchone()[0]) for table, sql in queries.items()}


@pytest.mark.parametrize(
    "kill",
    [
        # (the generate step's wave is the first call of each)
        ("stemma.core.store.sqlite.table_writes:insert_bundle", "3"),  # 2 of 3 bundles in
        ("stemma.core.store.sqlite.table_writes:insert_step_outputs", "2"),  # all, not committed
    ],
    ids=["between-two-bundles", "before-the-commit"],
)
def test_kill_9_inside_a_sqlite_wave_shows_nothing_of_it_and_recover_commits_it_whole(
    tmp_path: pathlib.Path, kill: tuple[str, str]
) -> None:
    root = tmp_path / "root"

    assert _run(root, tmp_path / "journal", "call", *kill, store="sqlite") == -signal.SIGKILL

    nothing = {
        "executions": 0,
        "artifacts": 0,
        "artifact_edges": 0,
        "step_outputs": 0,
        "committed_bundles": 1,
    }
    assert _sqlite_rows(root) == nothing
    assert open_run_store(root, kind="sqlite").recover() == 3
    # The bundles commit whole; the step's outputs were never staged on this store (they went
    # with the transaction that died), and the next run of the step writes them with its event.
    assert _sqlite_rows(root) == {
        **nothing,
        "executions": 3,
        "artifacts": 3,
        "artifact_edges": 3,
        "committed_bundles": 1 + 3,
    }
