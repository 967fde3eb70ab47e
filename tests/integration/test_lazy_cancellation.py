"""Cancelling a lazy run, for real: the same three presses and promises as a Pipeline run.

The script runs in its own session, so a press is a SIGINT to its whole process group, as a
terminal sends it. Each test waits on the run's live state file, never on a fixed sleep.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from stemma.core.live import RunState, RunStatus, list_states
from stemma.core.store import open_run_store
from tests.integration.process_tree import alive, descendants
from tests.integration.run_waits import wait_for_run

HERE = pathlib.Path(__file__).parent
SCRIPT = HERE / "cancellable_lazy.py"


def _start(root: pathlib.Path, seconds: float, *, stubborn: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            str(SCRIPT),
            str(root),
            str(seconds),
            str(root.parent / "slow-calls.txt"),
            *(["stubborn"] if stubborn else []),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(HERE)},  # workers import the script's functions
    )


def _two_slow_running(state: RunState) -> bool:
    return sum(step.running for step in state.steps if step.name.startswith("slow/")) >= 2


def _final_statuses(root: pathlib.Path, run_id: str) -> dict[str, str]:
    final: dict[str, str] = {}
    for event in open_run_store(root).step_events(run_id):
        if event.status != "running":
            final[event.step_name] = str(event.status)
    return final


def test_lazy_run_is_listed_live_with_its_step_tree(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "root"
    process = _start(root, seconds=1.0)
    state = wait_for_run(root, _two_slow_running, what="the lazy run")
    assert state.run_id.startswith("cancellable_")
    assert state.backend == "local"
    names = [step.name for step in state.steps]
    assert names[0] == "seed"
    assert names[-1] == "gather"
    assert sorted(names[1:5]) == [f"slow/{i}" for i in range(4)]
    gather = state.steps[-1]
    assert len(gather.upstream) == 4
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert out.strip() == "4"
    (done,) = [s for s in list_states(root) if s.run_id == state.run_id]
    assert done.status is RunStatus.COMPLETED
    assert all(step.succeeded == 1 for step in done.steps)
    listed = subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", "--root", str(root), "runs"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert state.run_id in listed.stdout
    explained = subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", "--root", str(root), "status", state.run_id],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "gather" in explained.stdout


def test_lazy_run_one_press_finishes_running_steps_and_a_rerun_redoes_only_the_rest(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "root"
    process = _start(root, seconds=1.5)
    state = wait_for_run(root, _two_slow_running, what="the lazy run")
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode != 0  # run() raised: the script did not get its artifacts
    assert "graceful" in err
    assert "Press Ctrl-C again for force" in err
    assert "cancelled (graceful)" in err
    statuses = _final_statuses(root, state.run_id)
    finished = sorted(name for name, status in statuses.items() if status == "completed")
    assert finished[:1] == ["seed"]
    assert len(finished) == 3
    assert statuses["gather"] == "skipped"
    calls = (tmp_path / "slow-calls.txt").read_text().splitlines()
    assert len(calls) == 2

    rerun = _start(root, seconds=1.5)  # the same inputs: the same keys
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    assert out.strip() == "4"
    # Only the two slow steps that never ran were run again.
    assert len((tmp_path / "slow-calls.txt").read_text().splitlines()) == 4


@pytest.mark.parametrize("presses", [2, 3])
def test_lazy_run_force_and_hard_presses_leave_no_worker_behind(
    tmp_path: pathlib.Path, presses: int
) -> None:
    root = tmp_path / "root"
    process = _start(root, seconds=60.0, stubborn=presses == 3)
    state = wait_for_run(root, _two_slow_running, what="the lazy run")
    workers = descendants(process.pid)
    assert workers, "the slow steps' workers should be running"
    started = time.monotonic()
    for level in range(1, presses + 1):
        os.killpg(process.pid, signal.SIGINT)
        if level < presses:  # each press seen before the next: signals close together merge
            wait_for_run(
                root, lambda s, level=level: s.cancel_level >= level, 10, what="the lazy run"
            )
    _, err = process.communicate(timeout=60)
    assert time.monotonic() - started < 30  # the 60 s steps were not waited for
    deadline = time.monotonic() + 10
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(workers), f"orphaned workers: {alive(workers)}"
    (after,) = [s for s in list_states(root) if s.run_id == state.run_id]
    assert after.cancel_level == presses
    assert after.status is RunStatus.CANCELLED
    if presses == 3:
        # The hard press raised KeyboardInterrupt: Python ends killed by SIGINT (a shell shows 130),
        # or exits 130 if it lingered (docs/concepts/cancellation.md).
        assert process.returncode in (-signal.SIGINT, 130), err
    else:
        assert "force" in err
        assert _final_statuses(root, state.run_id)["gather"] == "skipped"


def test_lazy_run_cancelled_by_stemma_cancel_from_another_process(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "root"
    process = _start(root, seconds=60.0)
    state = wait_for_run(root, _two_slow_running, what="the lazy run")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "stemma.core.cli.main",
            "--root",
            str(root),
            "cancel",
            state.run_id,
            "--level",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    _, err = process.communicate(timeout=60)
    assert "force" in err
    (after,) = [s for s in list_states(root) if s.run_id == state.run_id]
    assert after.status is RunStatus.CANCELLED
