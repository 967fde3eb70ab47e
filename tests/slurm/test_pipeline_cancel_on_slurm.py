"""Cancelling a pipeline that runs on slurm: Ctrl-C presses to a real orchestrator process.

The orchestrator runs ``cancellable_on_slurm.py`` in its own session, so a press is a SIGINT to
its process group, as a terminal sends it; the SLURM jobs are not in that group, so only the
backend's scancel can stop them.
"""

import os
import pathlib
import signal
import subprocess
import sys
import time
from typing import Any

import polars as pl
import pytest
from slurm_testing import processes_under, queued, wait_until

from stemma.core.live import RunStatus, read_state
from stemma.core.store import open_run_store
from stemma.storage import executions

pytestmark = pytest.mark.slurm

SCRIPT = pathlib.Path(__file__).with_name("cancellable_on_slurm.py")


def _start(root: pathlib.Path, seconds: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(root), str(seconds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    run_id = process.stdout.readline().strip()
    assert run_id, process.stderr.read() if process.stderr else "no run id"
    tag = f"stemma-{run_id[-8:]}"
    wait_until(lambda: queued(f"{tag}-s1", "RUNNING"), 120, "the slow step's elements to run")
    return process, run_id


def _press(process: subprocess.Popen[str], presses: int) -> None:
    for _ in range(presses):
        os.killpg(process.pid, signal.SIGINT)
        time.sleep(0.3)


def _final_events(root: pathlib.Path, run_id: str) -> dict[str, tuple[str, dict[str, Any]]]:
    final: dict[str, tuple[str, dict[str, Any]]] = {}
    for event in open_run_store(root).step_events(run_id):
        if event.status != "running":
            final[event.step_name] = (str(event.status), dict(event.metadata))
    return final


@pytest.mark.parametrize("presses", [2, 3])
def test_slurm_pipeline_force_and_hard_presses_leave_no_job_and_no_process(
    tmp_path: pathlib.Path, slurm_cluster: None, presses: int
) -> None:
    root = tmp_path / "store"
    process, run_id = _start(root, seconds=120.0)
    started = time.monotonic()
    _press(process, presses)
    _, err = process.communicate(timeout=90)
    tag = f"stemma-{run_id[-8:]}"
    wait_until(lambda: not queued(tag), 30, f"squeue to hold no job of {tag}")
    assert time.monotonic() - started < 60  # the 120 s units were not waited for
    log_dir = root / "logs" / "slurm" / run_id
    wait_until(lambda: not processes_under(log_dir), 15, "the jobs' processes to exit")
    state = read_state(root, run_id)
    assert state.cancel_level == presses
    assert state.status is RunStatus.CANCELLED
    # Hard: KeyboardInterrupt ends Python killed by SIGINT (a shell shows 130), or it exits 130
    # if it lingered (docs/concepts/cancellation.md).
    assert process.returncode in ((0,) if presses == 2 else (-signal.SIGINT, 130)), err


def test_slurm_pipeline_rerun_after_graceful_cancel_redoes_only_the_cancelled_units(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    root = tmp_path / "store"
    process, run_id = _start(root, seconds=4.0)
    _press(process, 1)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert not queued(f"stemma-{run_id[-8:]}")  # the backend's shutdown waited for that
    events = _final_events(root, run_id)
    assert events["example.slow_copy"][0] == "cancelled"
    copies = executions(root).filter(pl.col("step_name") == "example.slow_copy")
    finished = copies.filter(pl.col("success")).height  # the elements running at the press
    assert 1 <= finished < 4

    rerun = subprocess.run(
        [sys.executable, str(SCRIPT), str(root), "4.0"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    again = _final_events(root, rerun.stdout.splitlines()[0])
    assert again["example.generate"][1].get("cache") == "step"
    assert again["example.slow_copy"][0] == "completed"
    assert again["example.slow_copy"][1]["execution_cache_hits"] == finished
    assert again["example.transform"][0] == "completed"
