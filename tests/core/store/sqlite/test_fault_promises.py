"""``kill -9`` of an orchestrator on the SQLite store at each durable write: the restarted run
recovers what was staged, loses nothing committed, duplicates nothing (docs/concepts/store.md)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).with_name("fault_pipeline.py")
_STORE = "stemma.core.store.sqlite.store:SqliteStore"
_WRITES = "stemma.core.store.sqlite.table_writes"
_BACKEND = "stemma.core.backends.local:LocalBackend"
# (target, nth call, before/after). The three steps commit one wave each: one bundle, then
# three, then three; each wave fills its edges' types once, inside its transaction.
KILL_POINTS: dict[str, tuple[str, int, str]] = {
    "before-the-first-lookup": (f"{_STORE}.completed_steps", 1, "before"),
    "after-the-first-running-event": (f"{_STORE}.record_events", 1, "after"),
    "while-workers-run-and-stage": (
        "stemma.core.backends.local:LocalBackend.submit_wave",
        1,
        "after",
    ),
    "staged-before-the-commit": (f"{_STORE}.commit_wave", 1, "before"),
    "inside-the-first-transaction": (f"{_WRITES}:fill_edge_types", 1, "before"),
    "committed-not-retired": ("stemma.core.store.sqlite.wave_commit:retire_bundles", 2, "before"),
    "committed-before-the-final-event": (f"{_STORE}.record_events", 2, "before"),
    "inside-the-second-transaction": (f"{_WRITES}:insert_step_outputs", 2, "after"),
    "resolving-the-last-steps-inputs": (f"{_STORE}.step_outputs", 3, "before"),
    "inside-the-last-transaction": (f"{_WRITES}:fill_edge_types", 3, "before"),
    "before-the-last-final-event": (f"{_STORE}.record_events", 6, "before"),
}
UNIQUE_KEYS = {
    "artifacts": "artifact_id",
    "executions": "execution_run_id",
    "steps": "step_run_id, status",
    "artifact_edges": "*",
    "execution_roles": "*",
    "step_outputs": "*",
    "committed_bundles": "bundle",
}


def _run(root: Path, *kill: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HARNESS), str(root), *kill],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**os.environ, "STEMMA_STORE": "sqlite"},
    )


def _tables(root: Path) -> dict[str, set[str]]:
    """Every row of every table, as JSON lines; and no key repeated in any table."""
    if not (root / "core.sqlite").exists():
        return {table: set[str]() for table in UNIQUE_KEYS}
    found: dict[str, set[str]] = {}
    with contextlib.closing(sqlite3.connect(root / "core.sqlite")) as connection:
        for table, key in UNIQUE_KEYS.items():
            total, distinct = connection.execute(
                f"SELECT (SELECT count(*) FROM {table}), "
                f"(SELECT count(*) FROM (SELECT DISTINCT {key} FROM {table}))"
            ).fetchone()
            assert total == distinct, f"{table} repeats a row"
            rows = connection.execute(f"SELECT * FROM {table}").fetchall()
            found[table] = {json.dumps(row, default=repr) for row in rows}
    return found


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, list[str]], set[str]]:
    root = tmp_path_factory.mktemp("clean") / "root"
    done = _run(root)
    assert done.returncode == 0, done.stderr[-3000:]
    with contextlib.closing(sqlite3.connect(root / "core.sqlite")) as connection:
        ids = {row[0] for row in connection.execute("SELECT artifact_id FROM artifacts")}
    return json.loads(done.stdout), ids


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_kill_9_of_the_orchestrator_then_restart_recovers_loses_and_duplicates_nothing(
    tmp_path: Path, clean: tuple[dict[str, list[str]], set[str]], point: str
) -> None:
    root = tmp_path / "root"
    target, nth, when = KILL_POINTS[point]
    killed = _run(root, target, str(nth), when)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    committed = _tables(root)

    rerun = _run(root)  # Pipeline.create recovers, then the same pipeline

    assert rerun.returncode == 0, rerun.stderr[-3000:]
    expected_outputs, expected_ids = clean
    assert json.loads(rerun.stdout) == expected_outputs
    after = _tables(root)
    for table, rows in committed.items():
        assert rows <= after[table], f"{table} lost committed rows"
    with contextlib.closing(sqlite3.connect(root / "core.sqlite")) as connection:
        ids = {row[0] for row in connection.execute("SELECT artifact_id FROM artifacts")}
        keys = connection.execute(
            "SELECT count(DISTINCT execution_spec_id) FROM executions WHERE success"
        ).fetchone()[0]
    assert ids == expected_ids
    assert keys == 7
    leftovers = [p for p in (root / "staging").glob("*/*/*/*") if p.parts[-4] != ".retired"]
    assert leftovers == []
