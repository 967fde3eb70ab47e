"""``stemma check``: each damage of a real Delta root named with its file and fix; safe repairs."""

from __future__ import annotations

import contextlib
import json
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from stemma.core.cli.main import main
from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunStatus
from stemma.core.live.state import STATE_FILE, RunState, write_state
from stemma.storage import DeltaStore, executions, steps, table_check
from stemma.storage.check_findings import Severity
from stemma.storage.errors import DamagedTableError
from stemma.storage.root_check import LEDGER_NAME, check_root

from .conftest import FunctionStepFactory, commit_function_step


def _root_with_steps(store: DeltaStore, make_step: FunctionStepFactory, count: int = 3) -> Path:
    """A root where each table has ``count`` commits (one per step)."""
    for number in range(count):
        commit_function_step(store, make_step(f"step{number}", value=number))
    return store.layout.root


def _table(root: Path, name: str) -> Path:
    return root / "delta" / name


def _garble_a_data_file(root: Path, name: str) -> Path:
    file = sorted(_table(root, name).glob("part-*.parquet"))[0]
    file.write_bytes(b"not parquet at all" * 50)
    return file


def _check(root: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["check", str(root), *args])
    return code, capsys.readouterr().out


def test_check_sound_root_finds_nothing_and_exits_0(
    store: DeltaStore, make_step: FunctionStepFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _root_with_steps(store, make_step)
    report = check_root(root)
    assert report.clean, report.findings
    code, out = _check(root, capsys=capsys)
    assert code == ExitCode.OK
    assert "no problems" in out


def test_check_missing_commit_names_file_and_backup_fix_and_cannot_repair(
    store: DeltaStore, make_step: FunctionStepFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _root_with_steps(store, make_step)
    missing = _table(root, "orchestration/steps") / "_delta_log" / f"{1:020d}.json"
    missing.unlink()

    code, out = _check(root, "--repair", capsys=capsys)

    assert code == ExitCode.RUN_FAILED
    assert "damaged    delta/orchestration/steps/_delta_log/00000000000000000001.json" in out
    assert "is missing (commits 0 and 2 are there)" in out
    assert f"cp -a BACKUP/delta/orchestration/steps/_delta_log/{missing.name} {missing}" in out
    assert "not repaired: no repair is safe without you" in out
    assert "1 problem, 1 need you" in out


def test_check_gap_before_a_checkpoint_is_no_problem(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    root = _root_with_steps(store, make_step)
    DeltaTable(_table(root, "orchestration/steps")).create_checkpoint()
    (_table(root, "orchestration/steps") / "_delta_log" / f"{1:020d}.json").unlink()

    assert check_root(root).clean
    assert len(steps(root)) == 6  # and the table reads: the checkpoint covers the gap


def test_check_repair_quarantines_damaged_file_of_rebuildable_table_then_root_is_sound(
    store: DeltaStore, make_step: FunctionStepFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _root_with_steps(store, make_step)
    garbled = _garble_a_data_file(root, "orchestration/executions")
    with pytest.raises(DamagedTableError, match="orchestration/executions"):
        executions(root)

    code, out = _check(root, capsys=capsys)
    assert code == ExitCode.RUN_FAILED
    assert f"damaged    {garbled.relative_to(root)}" in out
    assert "is not Parquet (900 bytes, no PAR1 marks)" in out
    assert f"`stemma check --repair {root}` repairs 1 of them" in out
    assert garbled.exists()  # a check alone changes nothing

    code, out = _check(root, "--repair", capsys=capsys)
    assert code == ExitCode.REPAIRED
    moved = root / "quarantine" / "delta" / "orchestration" / "executions" / garbled.name
    assert f"done: moved it to {moved.relative_to(root)}" in out
    assert moved.read_bytes().startswith(b"not parquet")
    assert len(executions(root)) == 2  # the other rows read again
    assert check_root(root).clean


def test_check_damaged_file_of_artifact_table_needs_you_and_is_left_alone(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    root = _root_with_steps(store, make_step)
    garbled = _garble_a_data_file(root, "artifacts/index")

    report = check_root(root, repair=True)

    (finding,) = report.needs_you
    assert finding.problem.path == garbled
    assert "its rows are nowhere else" in finding.problem.what
    assert "put it back from a backup" in finding.problem.fix
    assert garbled.exists()


def test_check_repair_checkpoints_a_long_log(
    store: DeltaStore, make_step: FunctionStepFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_check, "CHECKPOINT_AFTER", 2)  # not 100 commits in a unit test
    root = _root_with_steps(store, make_step, count=4)
    log = _table(root, "orchestration/steps") / "_delta_log"

    found = [f for f in check_root(root).findings if f.problem.path == log]
    assert "commits since its last checkpoint" in found[0].problem.what
    repaired = [f for f in check_root(root, repair=True).findings if f.problem.path == log]

    version = DeltaTable(log.parent).version()
    assert repaired[0].done == f"wrote a checkpoint at version {version}"
    assert (log / f"{version:020d}.checkpoint.parquet").is_file()
    assert check_root(root).clean


def test_check_names_unreadable_state_and_garbled_ledger(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    root = _root_with_steps(store, make_step, count=1)
    broken = root / "runs" / "broken_20260101_000000_00000000" / STATE_FILE
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json")
    ledger = broken.parent / LEDGER_NAME
    entry = json.dumps({"job_id": "17", "job_name": "x"})
    ledger.write_text(f"{entry}\ngarbage\n{entry}\ntorn")

    report = check_root(root)

    by_path = {f.problem.path: f.problem for f in report.findings}
    assert by_path[broken].severity is Severity.DAMAGED
    assert f"rm {broken}" in by_path[broken].fix
    assert "(2)" in by_path[ledger].what  # line 2; the torn last line is a crash's, not a problem
    assert "stemma reap broken_20260101_000000_00000000" in by_path[ledger].fix


def test_check_names_a_run_whose_orchestrator_is_gone_with_reap(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    root = _root_with_steps(store, make_step, count=1)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process that ran on this host and is gone: its pid is free
    long_ago = "2026-01-01T00:00:00+00:00"
    run_id = "dead_20260101_000000_00000000"
    write_state(
        root,
        RunState(
            run_id=run_id,
            name="dead",
            status=RunStatus.RUNNING,
            pid=gone.pid,
            host=socket.gethostname(),
            root=str(root),
            backend="local",
            started_at=long_ago,
            heartbeat=long_ago,
        ),
    )

    (finding,) = check_root(root, repair=True).findings

    assert finding.problem.path == root / "runs" / run_id / STATE_FILE
    assert "its orchestrator is gone" in finding.problem.what
    assert finding.problem.fix.startswith(f"`stemma reap {run_id} --root {root}`")
    assert not finding.repaired  # reaping is the user's call: it settles the run for good


def test_check_repair_replaces_a_damaged_checkpoint_whose_commits_are_all_there(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    root = _root_with_steps(store, make_step)
    table = DeltaTable(_table(root, "orchestration/steps"))
    table.create_checkpoint()
    version = table.version()
    checkpoint = _table(root, "orchestration/steps") / "_delta_log"
    checkpoint /= f"{version:020d}.checkpoint.parquet"
    checkpoint.write_bytes(b"junk")

    (finding,) = check_root(root, repair=True).findings

    assert finding.problem.path == checkpoint
    assert finding.done == (
        f"moved it to quarantine/delta/orchestration/steps/_delta_log/{checkpoint.name} "
        f"and wrote a new checkpoint at version {version}"
    )
    assert len(steps(root)) == 6  # the table opens again, every row there
    assert check_root(root).clean


def test_check_damaged_checkpoint_without_its_commits_needs_a_backup(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    root = _root_with_steps(store, make_step)
    log = _table(root, "orchestration/steps") / "_delta_log"
    version = DeltaTable(log.parent).version()
    DeltaTable(log.parent).create_checkpoint()
    (log / f"{1:020d}.json").unlink()  # as vacuum's log clean-up does, before the checkpoint
    checkpoint = log / f"{version:020d}.checkpoint.parquet"
    checkpoint.write_bytes(b"junk")

    found = {f.problem.path: f for f in check_root(root, repair=True).needs_you}

    assert set(found) == {checkpoint, log / f"{1:020d}.json"}  # with 1 back, --repair can
    finding = found[checkpoint]
    assert "no longer all in the log" in finding.problem.what
    assert "put it back from a backup" in finding.problem.fix
    assert checkpoint.read_bytes() == b"junk"


def test_check_names_a_damaged_core_sqlite_with_its_fix(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    database = root / "core.sqlite"
    with contextlib.closing(sqlite3.connect(database)) as db, db:
        db.execute("CREATE TABLE steps (x)")
    assert check_root(root).clean  # a sound database is no problem
    database.write_bytes(b"SQLite format 3\x00" + b"torn" * 100)

    (finding,) = check_root(root).findings

    assert finding.problem.path == database
    assert finding.problem.what.startswith("is not a sound SQLite database (")
    assert f"sqlite3 {database} .recover" in finding.problem.fix
