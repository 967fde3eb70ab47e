"""`stemma run` in subprocesses: in the foreground, detached (outliving its parent), and errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunStatus, list_states, read_state
from tests.roots_under_test import Root, new_root

STEMMA = Path(sys.executable).parent / "stemma"
# Worker processes are spawned, so a script needs the main guard, exactly as under `python`.
SCRIPT = """
import sys
from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("scripted", max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": int(sys.argv[1]), "rows": 2})
    copy = {"dataset": generated.output("datasets")}
    pipeline.run(SlowCopy, inputs=copy, params={"seconds": 0.5})
    summary = pipeline.finalize()
    sys.exit(0 if summary["overall_success"] else 1)
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "scripted.py"
    path.write_text(SCRIPT)
    return path


def _stemma(root: Root, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STEMMA), "--root", str(root), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def test_run_runs_a_script_file_with_its_arguments_on_the_given_root(
    tmp_path: Path, script: Path
) -> None:
    root = new_root(tmp_path, "store")
    done = _stemma(root, "run", str(script), "2")
    assert done.returncode == ExitCode.OK, done.stderr
    [state] = list_states(root)
    assert (state.name, state.status) == ("scripted", RunStatus.COMPLETED)
    assert state.steps[1].succeeded == 2


FAILING = """
from stemma.core.examples import DataGenerator, Fail
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("failing", max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 2})
    pipeline.run(Fail, inputs={"dataset": generated.output("datasets")})
    pipeline.finalize()  # the script itself says nothing: stemma run says how its run ended
"""
CANCELLED = """
from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("cancelled", max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 4, "rows": 2})
    pipeline.submit(SlowCopy, inputs={"dataset": generated.output("datasets")},
                    params={"seconds": 2})
    pipeline.cancel()
    pipeline.finalize()
"""
LAZY_FAILING = """
import pathlib
from stemma.core import OUT, apply, run

def broken(out_path: str) -> None:
    raise ValueError("the input was not what this step expects")

if __name__ == "__main__":
    run(apply("broken", broken, version="v1", out_path=OUT))
"""


@pytest.mark.parametrize(
    ("text", "expected", "status"),
    [
        (FAILING, ExitCode.RUN_FAILED, RunStatus.FAILED),
        (CANCELLED, ExitCode.RUN_CANCELLED, RunStatus.CANCELLED),
        (LAZY_FAILING, ExitCode.RUN_FAILED, RunStatus.FAILED),
    ],
    ids=["failed", "cancelled", "lazy-failed"],
)
def test_run_exits_with_the_code_watch_gives_for_how_its_run_ended(
    tmp_path: Path, text: str, expected: ExitCode, status: RunStatus
) -> None:
    path = tmp_path / "a script.py"
    path.write_text(text)
    root = new_root(tmp_path, "store")
    done = _stemma(root, "run", str(path))
    assert done.returncode == expected, done.stderr
    [state] = list_states(root)
    assert state.status is status
    watched = _stemma(root, "watch", state.run_id, "--plain")
    assert watched.returncode == expected  # the same code for the same run, whoever asks


def test_run_of_a_missing_script_exits_not_found(tmp_path: Path) -> None:
    done = _stemma(tmp_path / "store", "run", str(tmp_path / "nope.py"))
    assert done.returncode == ExitCode.NOT_FOUND
    assert "no script" in done.stderr


def test_run_detach_prints_the_run_id_and_the_run_outlives_its_killed_parent(
    tmp_path: Path, script: Path
) -> None:
    root = new_root(tmp_path, "store")
    # A parent with its own process group, like a login shell: killing the group kills the
    # parent (as a dropped SSH connection would), and must not reach the detached run.
    parent = subprocess.Popen(
        [str(STEMMA), "--root", str(root), "run", "--detach", str(script), "6"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out, err = parent.communicate(timeout=120)
    assert parent.returncode == ExitCode.OK, err
    run_id = out.strip()
    state = read_state(root, run_id)
    assert state.status is RunStatus.RUNNING
    assert os.getsid(state.pid) == state.pid  # the leader of its own session
    if _group_alive(parent.pid):
        os.killpg(parent.pid, signal.SIGHUP)
    deadline = time.monotonic() + 120
    while read_state(root, run_id).status is RunStatus.RUNNING:
        assert time.monotonic() < deadline, "the detached run never finished"
        time.sleep(0.2)  # polling another process's progress: nothing to await
    final = read_state(root, run_id)
    assert final.status is RunStatus.COMPLETED
    assert final.steps[1].succeeded == 6
    assert "detached" in err


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
