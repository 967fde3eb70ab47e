"""What tells runs apart: who started each, the command line as its script saw it, and where.

A run's state file records them at start; a run known only from history gets them back from
the provenance its steps' running events carry; a state file written before the fields existed
still reads. ``RunRow`` turns them into one line and a short id, which ``stemma runs`` lists.
"""

from __future__ import annotations

import datetime as dt
import getpass
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core.cli.main import main
from stemma.core.live import RunState, RunStatus, list_states
from stemma.core.runs.run_lookup import all_runs
from stemma.core.runs.run_rows import RunRow

SCRIPT = """\
import sys
from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("tiny", root=sys.argv[1], max_workers=1)
    pipeline.run(DataGenerator, params={"count": 1, "rows": 2})
    pipeline.finalize()
"""


def _run_script(tmp_path: Path, *args: str) -> tuple[Path, Path]:
    """Run a one-step pipeline script in its own interpreter, from ``tmp_path``."""
    script = tmp_path / "make_data.py"
    script.write_text(SCRIPT)
    root = tmp_path / "root"
    done = subprocess.run(
        [sys.executable, "make_data.py", str(root), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return root, script


def test_a_run_s_state_file_records_its_user_command_line_and_working_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = _run_script(tmp_path, "--size", "3 rows")
    [state] = list_states(root)
    assert state.command == ("make_data.py", str(root), "--size", "3 rows")
    assert state.user == getpass.getuser()
    assert state.cwd == str(tmp_path)
    [row] = all_runs(root)
    assert row.user == getpass.getuser()
    assert row.description == "tiny · make_data.py …/root --size '3 rows'"  # (a long path)
    assert main(["runs", "--root", str(root), "--format", "json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert (listed["user"], listed["command"]) == (row.user, row.description)


def test_a_run_known_only_from_history_gets_its_user_host_and_command_from_its_events(
    tmp_path: Path,
) -> None:
    root, _ = _run_script(tmp_path, "again")
    [state] = list_states(root)
    shutil.rmtree(root / "runs")  # the state files go; the event log stays
    [row] = all_runs(root)
    assert not row.live
    assert (row.run_id, row.user, row.host) == (state.run_id, state.user, state.host)
    assert row.command == ("make_data.py", str(root), "again")
    assert row.cwd == ""  # provenance does not record it


def test_a_state_file_written_before_the_run_s_identity_was_kept_reads_with_none() -> None:
    old: dict[str, object] = {
        "run_id": "old_20261129_120000_00000001",
        "name": "old",
        "status": "completed",
        "pid": 1,
        "host": "h",
        "root": "/r",
        "backend": "local",
        "started_at": "2026-11-29T12:00:00+00:00",
        "heartbeat": "2026-11-29T12:00:00+00:00",
        "steps": [],
    }
    state = RunState.from_json(json.dumps(old))
    assert (state.user, state.command, state.cwd) == ("", (), "")
    assert RunState.from_json(state.to_json()) == state


def test_a_state_file_round_trips_the_command_as_a_tuple() -> None:
    state = RunState(
        run_id="new_20261129_120000_00000002",
        name="new",
        status=RunStatus.RUNNING,
        pid=1,
        host="h",
        root="/r",
        backend="local",
        started_at="2026-11-29T12:00:00+00:00",
        heartbeat="2026-11-29T12:00:00+00:00",
        user="ada",
        command=("slow.py", "2"),
        cwd="/home/ada",
    )
    assert RunState.from_json(state.to_json()) == state


def _row(name: str, command: tuple[str, ...]) -> RunRow:
    at = dt.datetime(2026, 11, 29, tzinfo=dt.UTC)
    return RunRow(
        run_id=f"{name}_20261129_120000_0a1b2c3d",
        name=name,
        status=RunStatus.COMPLETED,
        started=at,
        ended=at,
        steps_done=1,
        steps_total=1,
        command=command,
    )


def test_a_run_s_description_is_its_script_and_arguments_after_a_name_it_does_not_say() -> None:
    assert _row("slow", ("examples/slow.py", "2")).description == "slow.py 2"
    assert _row("quick", ("/x/pipes.py:quick",)).description == "pipes.py:quick"
    pytest_row = _row("first", ("/venv/bin/pytest", "-q", "a b"))
    assert pytest_row.description == "first · pytest -q 'a b'"
    assert _row("old", ()).description == "old"  # recorded before commands were kept
    long = _row("slow", ("slow.py", "/scratch/ada/projects/stemma-roots/big", "short/path"))
    assert long.description == "slow.py …/big short/path"
    assert _row("slow", ()).short_id == "0a1b2c3d"
