"""`stemma runs / status / watch / cancel` over state files, through main() as a user calls it."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import pytest

from stemma.core.cli.main import main
from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunStatus, StepState, pending_requests

from .conftest import StateFactory


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_runs_lists_live_runs_newest_first_as_csv(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    old = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    make_state("first_20261129_090000_00000001", RunStatus.COMPLETED, started=old)
    make_state("first_20261129_100000_00000002")
    code, out, _ = _run(capsys, "runs", "--root", str(root), "--format", "csv")
    assert code == ExitCode.OK
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["run_id"], r["status"], r["steps"]) for r in rows] == [
        ("first_20261129_100000_00000002", "running", "1/2"),
        ("first_20261129_090000_00000001", "completed", "1/2"),
    ]


def test_runs_filters_by_status_and_root_goes_before_the_command(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    make_state("a_20261129_090000_00000001", RunStatus.FAILED)
    make_state("b_20261129_100000_00000002")
    code, out, _ = _run(
        capsys, "--root", str(root), "runs", "--status", "failed", "--format", "json"
    )
    assert code == ExitCode.OK
    assert [row["run_id"] for row in json.loads(out)] == ["a_20261129_090000_00000001"]


def test_runs_shows_a_running_run_whose_heartbeat_stopped_as_stale(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    make_state(heartbeat=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5))
    _, out, _ = _run(capsys, "runs", "--root", str(root), "--format", "json")
    assert [row["status"] for row in json.loads(out)] == ["stale"]


def test_status_of_a_run_named_by_a_prefix_prints_its_steps(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    make_state("first_20261129_100000_aaaaaaaa")
    code, out, _ = _run(capsys, "status", "first_20261129_10", "--root", str(root))
    assert code == ExitCode.OK
    assert "run first_20261129_100000_aaaaaaaa: running" in out
    # step, name, status, total, done, succeeded, cached, failed, cancelled, running
    assert out.splitlines()[-1].split() == [
        "1",
        "transform",
        "running",
        "4",
        "1",
        "1",
        "0",
        "0",
        "0",
        "2",
    ]


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_status_as_json_or_csv_prints_only_that_on_stdout(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    make_state("first_20261129_100000_aaaaaaaa")
    code, out, err = _run(capsys, "status", "first", "--root", str(root), "--format", fmt)
    assert code == ExitCode.OK
    rows = json.loads(out) if fmt == "json" else list(csv.DictReader(io.StringIO(out)))
    assert [(row["name"], row["status"]) for row in rows] == [
        ("generate", "completed"),
        ("transform", "running"),
    ]
    assert "run first_20261129_100000_aaaaaaaa: running" in err  # the header, for a human


def test_status_of_a_pipeline_name_picks_its_newest_run(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    make_state("first_20261129_090000_00000001", RunStatus.COMPLETED)
    make_state("first_20261129_100000_00000002", RunStatus.COMPLETED)
    code, out, _ = _run(capsys, "status", "first", "--root", str(root))
    assert code == ExitCode.OK
    assert "first_20261129_100000_00000002" in out.splitlines()[0]


def test_status_of_an_unknown_run_exits_not_found_and_says_what_to_do(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    make_state("other_20261129_100000_aaaaaaaa")  # a root with runs, none of them "nope"
    code, _, err = _run(capsys, "status", "nope", "--root", str(root))
    assert code == ExitCode.NOT_FOUND
    assert "stemma runs" in err


def test_status_of_an_ambiguous_prefix_is_a_usage_error_listing_the_runs(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    make_state("first_20261129_090000_00000001")
    make_state("first_20261129_100000_00000002")
    code, _, err = _run(capsys, "status", "first_2026", "--root", str(root))
    assert code == ExitCode.USAGE
    assert "first_20261129_090000_00000001" in err


def test_every_command_takes_a_run_by_the_short_id_the_runs_list_shows(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    make_state("first_20261129_090000_0000abcd", RunStatus.COMPLETED)
    state = make_state("first_20261129_100000_f31d428e")
    code, out, _ = _run(capsys, "status", "f31d428e", "--root", str(root))
    assert code == ExitCode.OK
    assert f"run {state.run_id}: running" in out
    code, out, _ = _run(capsys, "cancel", "428e", "--root", str(root))  # any unique end
    assert code == ExitCode.OK
    assert [int(r.level) for r in pending_requests(root, state.run_id)] == [1]
    code, out, _ = _run(capsys, "watch", "0000abcd", "--root", str(root))
    assert code == ExitCode.OK
    assert "run first_20261129_090000_0000abcd completed" in out.splitlines()[-1]


def test_a_short_id_that_ends_several_runs_is_a_usage_error_listing_them(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    make_state("first_20261129_090000_0000abcd")
    make_state("other_20261129_100000_1111abcd")
    make_state("third_20261129_110000_22222222")
    code, _, err = _run(capsys, "status", "abcd", "--root", str(root))
    assert code == ExitCode.USAGE
    assert "'abcd' names 2 runs" in err
    assert "first_20261129_090000_0000abcd" in err
    assert "other_20261129_100000_1111abcd" in err


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (RunStatus.COMPLETED, ExitCode.OK),
        (RunStatus.FAILED, ExitCode.RUN_FAILED),
        (RunStatus.CANCELLED, ExitCode.RUN_CANCELLED),
    ],
)
def test_watch_of_a_finished_run_prints_plain_lines_and_exits_with_its_outcome(
    root: Path,
    make_state: StateFactory,
    capsys: pytest.CaptureFixture[str],
    status: RunStatus,
    expected: ExitCode,
) -> None:
    state = make_state(status=status)
    code, out, _ = _run(capsys, "watch", state.run_id, "--root", str(root))
    assert code == expected
    assert out.splitlines()[-1].endswith(
        f"run {state.run_id} {status}: 2 steps, 2/5 units, 0 failed, 0 cancelled"
    )


def test_watch_of_a_run_whose_orchestrator_died_exits_stale(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state(heartbeat=dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))
    code, _, _ = _run(capsys, "watch", state.run_id, "--root", str(root))
    assert code == ExitCode.RUN_STALE


def test_cancel_writes_a_request_at_the_level_asked_and_names_the_next_level(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state()
    code, out, _ = _run(capsys, "cancel", state.run_id, "--level", "force", "--root", str(root))
    assert code == ExitCode.OK
    assert [int(r.level) for r in pending_requests(root, state.run_id)] == [2]
    assert f"stemma cancel {state.run_id} --level 3" in out


def test_cancel_with_an_unknown_level_is_a_usage_error(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state()
    code, _, err = _run(capsys, "cancel", state.run_id, "--level", "9", "--root", str(root))
    assert code == ExitCode.USAGE
    assert "1 (graceful), 2 (force) or 3 (hard)" in err
    assert pending_requests(root, state.run_id) == []


def test_cancel_of_a_finished_run_asks_nothing(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state(
        status=RunStatus.COMPLETED, steps=(StepState(number=0, name="a", operation="a"),)
    )
    code, _, err = _run(capsys, "cancel", state.run_id, "--root", str(root))
    assert code == ExitCode.OK
    assert "nothing to cancel" in err
    assert pending_requests(root, state.run_id) == []


def test_main_without_a_command_prints_help_and_exits_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _run(capsys)
    assert code == ExitCode.USAGE
    assert "COMMAND" in err


def test_main_with_an_unknown_command_exits_usage() -> None:
    with pytest.raises(SystemExit) as exited:
        main(["frobnicate"])
    assert exited.value.code == ExitCode.USAGE


@pytest.mark.parametrize("command", ["runs", "status", "watch", "cancel", "explain"])
def test_a_root_that_is_not_there_is_an_error_naming_it_not_an_empty_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    missing = tmp_path / "no such root"
    argv = [command, "--root", str(missing)] + ([] if command == "runs" else ["some_run"])
    code, out, err = _run(capsys, *argv)
    assert code == ExitCode.NOT_FOUND
    assert out == ""
    assert f"there is no stemma root at {missing}" in err
    assert "--root DIR or set $STEMMA_ROOT" in err


def test_stemma_root_pointing_to_a_file_or_a_plain_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a root")
    monkeypatch.setenv("STEMMA_ROOT", str(a_file))
    code, _, err = _run(capsys, "runs")
    assert code == ExitCode.NOT_FOUND
    assert f"{a_file} ($STEMMA_ROOT) is a file, not a stemma root" in err
    monkeypatch.setenv("STEMMA_ROOT", str(tmp_path))
    code, _, err = _run(capsys, "runs")
    assert code == ExitCode.NOT_FOUND
    assert "is not a stemma root: it has none of runs, delta" in err


def test_the_default_root_is_named_when_it_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STEMMA_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "runs")
    assert code == ExitCode.NOT_FOUND
    assert f"no stemma root at {tmp_path / '.stemma'} (the default root, .stemma" in err


def test_a_root_made_by_the_sqlite_store_alone_counts_as_a_root() -> None:
    from stemma.core.runs.roots import ROOT_MARKS
    from stemma.core.store.sqlite.schema import DATABASE_FILE

    assert DATABASE_FILE in ROOT_MARKS


def test_cancel_of_a_stale_run_asks_nothing_and_says_to_reap_it(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state(heartbeat=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5))
    code, _, err = _run(capsys, "cancel", state.run_id, "--root", str(root))
    assert code == ExitCode.RUN_STALE
    assert f"`stemma reap {state.run_id}` settles it" in err
    assert pending_requests(root, state.run_id) == []
