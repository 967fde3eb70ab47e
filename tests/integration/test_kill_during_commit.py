"""kill -9 of a real runner between staging and commit: nothing is lost, nothing runs twice."""

import os
import pathlib
import signal
import subprocess
import sys
import time

import polars as pl

from stemma.core import resolve
from stemma.storage import executions, steps
from tests.roots_under_test import new_root, on_this_machine

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from dying_runner import step  # noqa: E402


def _wait_for(path: pathlib.Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def test_runner_killed_after_staging_is_committed_once_by_the_runner_waiting_behind_it(
    tmp_path: pathlib.Path,
) -> None:
    root, counter, go = new_root(tmp_path), tmp_path / "executions.txt", tmp_path / "go"
    dying = subprocess.Popen(
        [sys.executable, str(HERE / "dying_runner.py"), str(root), str(counter), str(go)],
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(counter)  # the dying runner holds the step's lock and is inside its function
    go.touch()
    # This runner blocks on the lock, then must find the staged work instead of redoing it.
    artifact = resolve(step(str(counter), str(go)), root=root)
    dying.communicate(timeout=60)
    assert dying.returncode == -signal.SIGKILL
    assert artifact.value == 7
    assert artifact.path().read_text() == "built once"
    assert len(counter.read_text().splitlines()) == 1
    assert executions(root).height == 1
    statuses = steps(root).filter(pl.col("status") == "completed")
    assert statuses.height == 1
    # And the next start finds nothing left to commit.
    here = on_this_machine(root)
    assert not any(p.name == "executions.parquet" for p in (here / "staging").rglob("*"))
    assert os.listdir(here / "outputs")
