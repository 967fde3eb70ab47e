"""`stemma resume RUN`: a dead run's recorded command starts again, detached, and says so.

A run records at start how its orchestrator was started (the interpreter, the script, its
arguments, the working directory); a run killed mid-step is resumed by running that again on the
same root, and the new run says which run it resumes. Every run that cannot be resumed is
refused with what to do instead.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stemma.core.cli.main import main
from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunStatus, list_states, read_state, write_state

from .conftest import StateFactory

UNITS = 16
SCRIPT = f"""
import sys

from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline


def main(seconds: float) -> None:
    pipeline = Pipeline.create("resumable", max_workers=2)
    generated = pipeline.run(DataGenerator, params={{"count": {UNITS}, "rows": 2}})
    pipeline.run(
        SlowCopy,
        inputs={{"dataset": generated.output("datasets")}},
        params={{"seconds": seconds}},
        execution={{"units_per_worker": 1}},
    )
    pipeline.finalize()


if __name__ == "__main__":  # workers are spawned: they import this file
    main(float(sys.argv[1]))
"""


QUICK = """
import sys
from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    Pipeline.create("quick").run(DataGenerator, params={"count": int(sys.argv[1]), "rows": 1})
"""


def _killed_mid_step(tmp_path: Path, root: Path) -> str:
    """``python resumable.py 0.8`` run from ``tmp_path``, SIGKILLed mid-step: its run id."""
    (tmp_path / "resumable.py").write_text(SCRIPT)
    process = subprocess.Popen(
        [sys.executable, "resumable.py", "0.8"],
        cwd=tmp_path,
        env={**os.environ, "STEMMA_ROOT": str(root)},
    )
    try:
        deadline = time.monotonic() + 120
        while not _copying(root):
            assert process.poll() is None, "the pipeline ended before it could be killed"
            assert time.monotonic() < deadline, "the slow step never got going"
            time.sleep(0.05)  # polling another process's state file: nothing to await
        os.kill(process.pid, signal.SIGKILL)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=60)
    [state] = list_states(root)
    return state.run_id


def _copying(root: Path) -> bool:
    states = list_states(root)
    if not states or len(states[0].steps) < 2:
        return False
    copy = states[0].steps[1]
    return copy.status == "running" and copy.succeeded >= 2 and copy.running > 0


def test_resume_starts_a_killed_runs_recorded_command_and_the_new_run_says_it_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "store"
    old = _killed_mid_step(tmp_path, root)
    dead = read_state(root, old)
    assert dead.status is RunStatus.STALE
    # Recorded at start: the interpreter that ran it, the script and its argument, where.
    assert dead.launch == (sys.executable, "resumable.py", "0.8")
    assert (dead.command, dead.cwd, dead.resumes) == (("resumable.py", "0.8"), str(tmp_path), "")

    capsys.readouterr()
    assert main(["--root", str(root), "resume", "resumable"]) == ExitCode.OK  # its newest run
    out, err = capsys.readouterr()
    new = out.strip()
    assert new != old
    assert new.startswith("resumable_")
    assert f"resuming {old} as {new}" in err
    assert f"stemma watch {new}" in err
    assert str(root / "logs" / "detached") in err

    deadline = time.monotonic() + 120
    while read_state(root, new).status is RunStatus.RUNNING:
        assert time.monotonic() < deadline, "the resumed run never finished"
        time.sleep(0.2)  # polling another process's state file: nothing to await
    resumed = read_state(root, new)
    assert resumed.status is RunStatus.COMPLETED
    assert resumed.resumes == old
    assert (resumed.launch, resumed.cwd) == (dead.launch, dead.cwd)
    copy = resumed.steps[1]
    assert copy.succeeded == UNITS
    assert copy.cached >= 2  # what the dead run finished is not run again
    capsys.readouterr()
    assert main(["--root", str(root), "status", new]) == ExitCode.OK
    assert f"resuming {old}" in capsys.readouterr().out


def test_stemma_run_records_its_own_command_line_for_a_resume(tmp_path: Path) -> None:
    (tmp_path / "quick.py").write_text(QUICK)
    root = tmp_path / "store"
    stemma = Path(sys.executable).parent / "stemma"
    done = subprocess.run(
        [str(stemma), "--root", str(root), "run", "--quiet", "quick.py", "3"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == ExitCode.OK, done.stderr
    [state] = list_states(root)
    assert state.launch == (
        sys.executable,
        str(stemma),
        "--root",
        str(root),
        "run",
        "--quiet",
        "quick.py",
        "3",
    )
    assert (state.command, state.cwd) == (("quick.py", "3"), str(tmp_path))


def test_resume_of_an_unknown_run_names_the_close_ones(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    make_state("first_20261129_100000_aaaaaaaa", RunStatus.COMPLETED)
    assert main(["--root", str(root), "resume", "frist"]) == ExitCode.NOT_FOUND
    err = capsys.readouterr().err
    assert "no run 'frist'" in err
    assert "did you mean first" in err


def test_resume_of_a_live_run_is_refused_and_says_stemma_cancel(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state()  # running, in this (alive) process
    assert main(["--root", str(root), "resume", state.run_id]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "is still alive" in err
    assert f"stemma cancel {state.run_id}" in err


def test_resume_of_a_run_already_being_resumed_names_the_run_resuming_it(
    tmp_path: Path, root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "flow.py").write_text("")
    launch = (sys.executable, "flow.py")
    dead = make_state(status=RunStatus.STALE)
    write_state(
        root, dataclasses.replace(dead, command=launch[1:], launch=launch, cwd=str(tmp_path))
    )
    resuming = make_state("first_20261129_110000_bbbbbbbb")  # alive: this process
    write_state(root, dataclasses.replace(resuming, resumes=dead.run_id))
    assert main(["--root", str(root), "resume", dead.run_id]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert f"already being resumed by {resuming.run_id}" in err
    assert f"stemma watch {resuming.run_id}" in err


def test_resume_of_a_run_with_no_recorded_command_says_what_to_run_by_hand(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state(status=RunStatus.STALE)  # as written before commands were recorded
    write_state(root, dataclasses.replace(state, command=("flow.py", "2"), cwd="/work/flows"))
    assert main(["--root", str(root), "resume", state.run_id]) == ExitCode.NOT_FOUND
    err = capsys.readouterr().err
    assert "recorded no command to run again" in err
    assert f"cd /work/flows && stemma run --detach --root {root} --backend local flow.py 2" in err


def test_resume_of_a_run_whose_script_is_gone_names_the_script(
    tmp_path: Path, root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state(status=RunStatus.STALE)
    launch = (sys.executable, "gone.py", "2")
    write_state(
        root,
        dataclasses.replace(state, command=launch[1:], launch=launch, cwd=str(tmp_path)),
    )
    assert main(["--root", str(root), "resume", state.run_id]) == ExitCode.NOT_FOUND
    err = capsys.readouterr().err
    assert f"{tmp_path / 'gone.py'}, no longer exists" in err
    assert not (root / "logs" / "detached").exists()  # nothing was started


def test_resume_of_a_notebooks_run_is_refused(
    tmp_path: Path, root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state(status=RunStatus.STALE)
    argv = ("/venv/lib/ipykernel_launcher.py", "-f", "/run/kernel-1.json")
    notebook = dataclasses.replace(
        state, command=argv, launch=(sys.executable, *argv), cwd=str(tmp_path)
    )
    write_state(root, notebook)
    assert main(["--root", str(root), "resume", state.run_id]) == ExitCode.USAGE
    assert "started from a notebook" in capsys.readouterr().err


def test_resume_refuses_a_command_recorded_in_a_file_another_user_could_write(
    tmp_path: Path, root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "flow.py"
    script.write_text("print('hello')\n")
    state = make_state(status=RunStatus.STALE)
    launch = (sys.executable, str(script), "2")
    write_state(
        root, dataclasses.replace(state, command=launch[1:], launch=launch, cwd=str(tmp_path))
    )
    recorded = root / "runs" / state.run_id / "state.json"
    recorded.chmod(0o666)  # anyone may have written what resume would run
    assert main(["--root", str(root), "resume", state.run_id]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert f"{recorded} can be written by another user" in err
    assert f"chmod go-w {recorded}" in err
    assert str(script) in err  # shown to be checked and started by hand
    assert not (root / "logs" / "detached").exists()  # nothing was started
