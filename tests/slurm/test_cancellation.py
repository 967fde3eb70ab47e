"""Cancelling on the real local cluster: every level leaves squeue empty of the run's jobs."""

import os
import pathlib
import signal
import subprocess
import sys
import time
from concurrent.futures import Future
from typing import Any

import pytest
import slurm_tasks
from slurm_testing import Run, processes_under, queued, wait_until

from stemma.core.backends.base import WorkerCrashedError
from stemma.core.cancel_levels import CancelLevel
from stemma.slurm import SlurmBackend, reap

pytestmark = pytest.mark.slurm

HERE = pathlib.Path(__file__).parent


def _started(flag: pathlib.Path) -> list[pathlib.Path]:
    return list(flag.parent.glob(f"{flag.name}.started.*"))


@pytest.mark.parametrize("level", [CancelLevel.FORCE, CancelLevel.HARD])
def test_slurm_cancel_leaves_no_job_and_no_process_of_the_run(
    backend: SlurmBackend, run: Run, tmp_path: pathlib.Path, level: CancelLevel
) -> None:
    flag = tmp_path / "release"  # never created: the units wait until cancelled
    futures = backend.submit_wave(slurm_tasks.wait_for_file, [str(flag)] * 4, run.request())
    wait_until(lambda: len(_started(flag)) == 2, 90, "two elements to start")
    started = time.monotonic()
    backend.cancel(level)
    wait_until(lambda: not queued(run.tag), 30, f"squeue to hold no job of {run.tag}")
    print(f"{level.name}: squeue empty {time.monotonic() - started:.1f}s after cancel")
    for future in futures:
        if not future.cancelled():
            error = future.exception(timeout=60)
            assert isinstance(error, WorkerCrashedError)
            assert "the run was cancelled" in str(error)
    assert sum(future.cancelled() for future in futures) == 2
    log_dir = run.root / "logs" / "slurm" / run.run_id
    wait_until(lambda: not processes_under(log_dir), 10, "the jobs' processes to exit")
    assert len(_started(flag)) == 2


def test_slurm_graceful_cancel_drops_waiting_elements_and_lets_running_ones_finish(
    backend: SlurmBackend, run: Run, tmp_path: pathlib.Path
) -> None:
    flag = tmp_path / "release"
    futures: list[Future[Any]] = backend.submit_wave(
        slurm_tasks.wait_for_file, [str(flag)] * 3, run.request(max_parallel=1)
    )
    wait_until(lambda: futures[0].running(), 90, "the first element to be seen running")
    backend.cancel(CancelLevel.GRACEFUL)
    assert [future.cancel() for future in futures] == [False, True, True]
    flag.touch()
    assert futures[0].result(timeout=60) == "released"
    wait_until(lambda: not queued(run.tag), 30, f"squeue to hold no job of {run.tag}")
    assert [path.name.rsplit(".", 1)[-1] for path in _started(flag)] == ["0"]


_ORCHESTRATOR = """
import sys, time
from stemma.slurm import SlurmBackend
from slurm_testing import Run
import slurm_tasks
run = Run(run_id=sys.argv[1], root=__import__("pathlib").Path(sys.argv[2]))
backend = SlurmBackend()
backend.submit_wave(slurm_tasks.wait_for_file, [sys.argv[3]] * 3, run.request())
print("submitted", flush=True)
time.sleep(600)
"""


def test_slurm_reap_cancels_the_jobs_of_a_killed_orchestrator(
    slurm_cluster: None, run: Run, tmp_path: pathlib.Path
) -> None:
    flag = tmp_path / "release"
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    with subprocess.Popen(
        [sys.executable, "-c", _ORCHESTRATOR, run.run_id, str(run.root), str(flag)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    ) as orchestrator:
        try:
            assert orchestrator.stdout is not None
            assert orchestrator.stdout.readline().strip() == "submitted"
        finally:
            os.kill(orchestrator.pid, signal.SIGKILL)
    assert queued(run.tag), "the dead orchestrator's jobs should still be queued"
    assert run.ledger.exists()
    cancelled = reap(run.run_id, root=run.root)
    assert len(cancelled) == 1
    assert not queued(run.tag)
    assert reap(run.tag) == []


def test_slurm_requeued_element_runs_again_and_settles_once(
    backend: SlurmBackend, run: Run, tmp_path: pathlib.Path
) -> None:
    flag = tmp_path / "release"
    [future] = backend.submit_wave(slurm_tasks.wait_for_file, [str(flag)], run.request())
    wait_until(lambda: len(_started(flag)) == 1, 90, "the element to start")
    job_id = backend.poller.unsettled()[0].files.job_id
    subprocess.run(["scontrol", "requeue", job_id], check=True, capture_output=True)
    [started] = _started(flag)
    wait_until(lambda: len(started.read_text().splitlines()) == 2, 90, "the element to start again")
    flag.touch()
    assert future.result(timeout=60) == "released"
    assert started.read_text().splitlines() == ["0", "1"]


_PIPELINE = """
import sys
from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline
pipeline = Pipeline.create("reaped", root=sys.argv[1], backend="slurm")
generated = pipeline.run(DataGenerator, params={"count": 2})
print(pipeline.run_id, flush=True)
pipeline.run(SlowCopy, inputs={"dataset": generated.output("datasets")}, params={"seconds": 300})
"""
# (a creator: a curator such as Wait runs beside the orchestrator, never as a job)


def test_slurm_stemma_reap_cancels_the_jobs_of_a_killed_pipeline(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    root = tmp_path / "store"
    with subprocess.Popen(
        [sys.executable, "-c", _PIPELINE, str(root)], stdout=subprocess.PIPE, text=True
    ) as orchestrator:
        try:
            assert orchestrator.stdout is not None
            run_id = orchestrator.stdout.readline().strip()
            tag = f"stemma-{run_id[-8:]}"
            wait_until(lambda: any("-s1-" in line for line in queued(tag)), 90, "the wait step")
        finally:
            os.kill(orchestrator.pid, signal.SIGKILL)
    stemma = pathlib.Path(sys.executable).parent / "stemma"
    done = subprocess.run(
        [str(stemma), "reap", run_id, "--root", str(root), "--yes"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "slurm: cancelled 1 jobs" in done.stdout
    assert not queued(tag)
