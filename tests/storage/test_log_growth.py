"""A table's commit log after many commits: checkpoints, vacuum's log cleanup, table opens.

The table is built once per module by stemma's own commit path (``commit_frames``, one row and
one application transaction per commit) and copied for each test that changes it.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from deltalake import DeltaTable

from stemma.core.store.locations import RootLayout
from stemma.storage.commit import app_id, commit_frames
from stemma.storage.delta_log import commits_since_checkpoint, newest_checkpoint
from stemma.storage.maintenance import vacuum_root
from stemma.storage.schemas import EXECUTIONS
from stemma.storage.table_handles import REOPEN_AFTER_COMMITS, table_handle
from stemma.storage.table_places import table_place
from stemma.storage.tables import CHECKPOINT_INTERVAL, read_table

_LATEST = CHECKPOINT_INTERVAL + 30
"""The built table's newest version: its commits are numbered 0 to this, as its versions are."""
_T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
_HOURS_AGO_3 = time.time() - 3 * 3600


def commit_numbered(layout: RootLayout, number: int) -> bool:
    """Commit one execution row numbered ``number`` through stemma's commit path."""
    row = {
        "execution_run_id": f"run-{number}",
        "execution_spec_id": f"spec-{number}",
        "step_run_id": "step-run",
        "step_spec_id": "step-spec",
        "step_name": "busy",
        "step_number": 0,
        "started_at": _T0,
        "ended_at": _T0,
        "success": True,
    }
    return commit_frames(layout, {EXECUTIONS: EXECUTIONS.frame([row])}, app_id(f"n{number}"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root whose executions table has versions 0 to ``_LATEST``, one commit each (the first
    creates the table with its row)."""
    root = tmp_path_factory.mktemp("busy") / "root"
    layout = RootLayout(root)
    for number in range(_LATEST + 1):
        assert commit_numbered(layout, number)
    return root


@pytest.fixture
def root(built: Path, tmp_path: Path) -> Path:
    """A copy of the built root (modification times kept) for a test to change."""
    return Path(shutil.copytree(built, tmp_path / "root"))


def _log(root: Path) -> Path:
    return EXECUTIONS.path(RootLayout(root).delta) / "_delta_log"


def _age(paths: list[Path], when: float = _HOURS_AGO_3) -> None:
    for path in paths:
        os.utime(path, (when, when))


def _rows(root: Path) -> list[tuple[object, ...]]:
    return sorted(read_table(RootLayout(root), EXECUTIONS).rows(), key=repr)


def _versions(log: Path) -> list[int]:
    return sorted(int(p.name.split(".")[0]) for p in log.glob("*.json"))


def test_commits_checkpoint_the_table_every_interval(built: Path) -> None:
    log = _log(built)
    checkpoints = sorted(path.name for path in log.glob("*.checkpoint.parquet"))

    assert checkpoints == [f"{CHECKPOINT_INTERVAL - 1:020}.checkpoint.parquet"]
    settings = DeltaTable(log.parent).metadata().configuration
    assert settings == {"delta.checkpointInterval": str(CHECKPOINT_INTERVAL)}
    assert (log / "_last_checkpoint").is_file()
    assert newest_checkpoint(log) == CHECKPOINT_INTERVAL - 1
    # versions 0.._LATEST: a reader replays the ones after the checkpoint, not all of them
    assert commits_since_checkpoint(log.parent) == _LATEST - CHECKPOINT_INTERVAL + 1


def test_table_open_reads_only_the_log_since_the_last_checkpoint(root: Path) -> None:
    rows = _rows(root)
    log = _log(root)
    history = [log / f"{version:020}.json" for version in range(CHECKPOINT_INTERVAL - 1)]
    for entry in history:  # garbage a reader would fail on, had it read them
        entry.write_text("not a commit\n")

    table = DeltaTable(log.parent)

    assert table.version() == _LATEST
    assert sorted(pl.DataFrame(table.to_pyarrow_table()).rows(), key=repr) == rows


def test_expired_log_entries_go_with_the_next_checkpoint_not_at_every_commit(root: Path) -> None:
    layout = RootLayout(root)
    rows = _rows(root)
    log = _log(root)
    _age(sorted(log.iterdir()), time.time() - 40 * 24 * 3600)  # past the 30-day retention
    before = _versions(log)

    assert commit_numbered(layout, _LATEST + 1)  # no checkpoint with this one: the log stays
    assert _versions(log) == [*before, _LATEST + 1]

    next_checkpoint = 2 * CHECKPOINT_INTERVAL - 1
    for number in range(_LATEST + 2, next_checkpoint + 1):  # the last makes that version
        assert commit_numbered(layout, number)

    # the checkpoint's commit removed the expired entries before the previous checkpoint
    assert newest_checkpoint(log) == next_checkpoint
    assert _versions(log) == list(range(CHECKPOINT_INTERVAL - 1, next_checkpoint + 1))
    assert len(_rows(root)) == len(rows) + next_checkpoint - _LATEST


def test_a_tables_handle_is_reopened_from_the_newest_checkpoint_once_it_lags(
    tmp_path: Path,
) -> None:
    layout = RootLayout(tmp_path)
    commit_numbered(layout, 0)
    path = table_place(layout, EXECUTIONS.name)
    with table_handle(path) as first:
        pass
    # The handle was opened at version 0, which the first commit made with its row.
    for number in range(1, REOPEN_AFTER_COMMITS):  # each append catches the handle up
        commit_numbered(layout, number)
    with table_handle(path) as caught_up:
        assert caught_up is first  # 99 commits caught up: still the first handle

    commit_numbered(layout, REOPEN_AFTER_COMMITS)

    with table_handle(path) as again:
        assert again is not first  # a caught-up handle keeps every commit; a fresh one does not
        assert again.version() == REOPEN_AFTER_COMMITS
    assert read_table(layout, EXECUTIONS).height == REOPEN_AFTER_COMMITS + 1


def test_one_handle_of_a_table_is_lent_to_one_thread_at_a_time(tmp_path: Path) -> None:
    layout = RootLayout(tmp_path)
    commit_numbered(layout, 0)
    path = table_place(layout, EXECUTIONS.name)
    borrowed = threading.Event()
    given_back = threading.Event()
    seen: list[object] = []

    def borrow() -> None:
        with table_handle(path) as table:
            seen.append(table)
            borrowed.set()
            given_back.wait(10)

    holder = threading.Thread(target=borrow)
    holder.start()
    assert borrowed.wait(10)
    waiter = threading.Thread(target=lambda: seen.append(read_table(layout, EXECUTIONS)))
    waiter.start()
    waiter.join(0.5)
    assert waiter.is_alive()  # the reader waits for the handle, not a second copy of it
    given_back.set()
    holder.join(10)
    waiter.join(10)
    assert not waiter.is_alive()
    assert seen[1].height == 1  # type: ignore[union-attr]
    with table_handle(path) as table:
        assert table is seen[0]  # one handle for the process, caught up for each thread


def test_vacuum_removes_log_entries_before_the_checkpoint_and_keeps_rows_and_idempotency(
    root: Path,
) -> None:
    layout = RootLayout(root)
    log = _log(root)
    rows = _rows(root)
    checkpoint = CHECKPOINT_INTERVAL - 1
    expired = [log / f"{version:020}.json" for version in range(checkpoint)]

    report = vacuum_root(root, retain_hours=0, min_retain_hours=0, apply=True)

    assert {entry.path for entry in report.log_entries} == set(expired)
    assert {entry.kind for entry in report.log_entries} == {f"log {EXECUTIONS.name}"}
    assert report.log_bytes > 0
    assert not any(path.exists() for path in expired)
    assert _versions(log) == list(range(checkpoint, _LATEST + 1))
    assert (log / f"{checkpoint:020}.checkpoint.parquet").is_file()
    assert _rows(root) == rows
    # the application transactions of the removed commits live on in the checkpoint: a retry
    # of the very first commit is still recognised, and skipped
    assert not commit_numbered(layout, 0)
    assert commit_numbered(layout, _LATEST + 1)
    assert len(_rows(root)) == len(rows) + 1


def test_vacuum_keeps_log_entries_younger_than_the_retention_and_a_dry_run_keeps_all(
    root: Path,
) -> None:
    log = _log(root)
    old = [log / f"{version:020}.json" for version in range(10)]
    _age(old)

    dry = vacuum_root(root, retain_hours=2)
    assert {entry.path for entry in dry.log_entries} == set(old)
    assert all(path.exists() for path in old)

    done = vacuum_root(root, retain_hours=2, apply=True)

    assert {entry.path for entry in done.log_entries} == set(old)
    assert _versions(log) == list(range(10, _LATEST + 1))


def test_vacuum_removes_no_log_entry_of_a_table_without_a_checkpoint(tmp_path: Path) -> None:
    layout = RootLayout(tmp_path)
    for number in range(5):
        commit_numbered(layout, number)
    log = _log(tmp_path)
    _age(list(log.iterdir()))

    report = vacuum_root(tmp_path, retain_hours=0, min_retain_hours=0, apply=True)

    assert report.log_entries == ()
    assert _versions(log) == list(range(5))
    assert read_table(layout, EXECUTIONS).height == 5


def test_vacuum_keeps_the_checkpoint_last_checkpoint_names_even_when_a_newer_exists(
    root: Path,
) -> None:
    # a crash between writing a checkpoint and pointing _last_checkpoint at it
    log = _log(root)
    hinted = (log / "_last_checkpoint").read_bytes()
    DeltaTable(log.parent).create_checkpoint()
    (log / "_last_checkpoint").write_bytes(hinted)
    _age(list(log.iterdir()))

    vacuum_root(root, retain_hours=0, min_retain_hours=0, apply=True)

    assert _versions(log)[0] == CHECKPOINT_INTERVAL - 1
    assert DeltaTable(log.parent).version() == _LATEST


def test_stemma_vacuum_says_how_many_log_entries_it_removed(root: Path) -> None:
    _age(list(_log(root).iterdir()))

    def stemma(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "stemma.core.cli.main", "vacuum", str(root), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    expired = CHECKPOINT_INTERVAL - 1
    dry = stemma("--retain-hours", "2")
    assert f"would remove {expired} log entries of {EXECUTIONS.name}" in dry
    assert "add --apply to delete" in dry
    assert "nothing older than" not in dry
    applied = stemma("--retain-hours", "2", "--apply")
    assert f"removed {expired} log entries of {EXECUTIONS.name}" in applied
    assert f"removed {expired} log entries of 1 table older than 2 h" in applied
    assert _versions(_log(root))[0] == CHECKPOINT_INTERVAL - 1
