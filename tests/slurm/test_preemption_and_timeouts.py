"""Elements the scheduler takes back: a requeue (preemption) reruns them, a timeout fails them.

Either way no unit is lost and none is committed twice: a requeued element's units run again
from the start and are committed once, when the element's second attempt returns; a timed-out
element's units are recorded as failures with the scheduler's reason and the element's log.
"""

import pathlib
import subprocess
import threading
import time

import pytest
from slurm_tasks import StallOnSecondUnit

from stemma.core.operations.examples import DataGenerator, SlowCopy
from stemma.core.pipeline.pipeline import Pipeline
from stemma.storage import artifacts, executions

pytestmark = pytest.mark.slurm


def _running_elements(tag: str) -> list[str]:
    out = subprocess.run(
        ["squeue", "-h", "-r", "-t", "RUNNING", "-o", "%i|%j"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.split("|")[0] for line in out.splitlines() if f"|{tag}-s1-" in line]


def _requeue_first_running(tag: str, requeued: list[str], stop: threading.Event) -> None:
    """Preempt (requeue) the first element of step 1 seen running, as a scheduler would."""
    while not stop.is_set():
        running = _running_elements(tag)
        if running:
            subprocess.run(["scontrol", "requeue", running[0]], check=True, capture_output=True)
            requeued.append(running[0])
            return
        time.sleep(0.2)


def _sacct_states(job_id: str) -> list[str]:
    """Every state the element went through, earlier attempts included (``--duplicates``)."""
    out = subprocess.run(
        ["sacct", "-n", "-X", "-P", "--duplicates", "-j", job_id, "-o", "State"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def test_a_requeued_element_reruns_its_units_and_commits_them_once(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    root = tmp_path / "store"
    pipeline = Pipeline.create("preempted", root=root, backend="slurm")
    generated = pipeline.run(DataGenerator, params={"count": 4, "rows": 5})
    requeued: list[str] = []
    stop = threading.Event()
    preempter = threading.Thread(
        target=_requeue_first_running,
        args=(f"stemma-{pipeline.run_id[-8:]}", requeued, stop),
        daemon=True,
    )
    preempter.start()
    try:
        copied = pipeline.run(
            SlowCopy,
            inputs={"dataset": generated.output("datasets")},
            params={"seconds": 4.0},
            execution={"max_workers": 2},
        )
    finally:
        stop.set()
        preempter.join(5)
    summary = pipeline.finalize()

    assert len(requeued) == 1, "no element of the slow step was seen running"
    assert "REQUEUED" in _sacct_states(requeued[0])  # the element really was taken back
    assert summary["overall_success"] is True, summary
    assert (copied.succeeded_count, copied.failed_count) == (4, 0)
    assert set(pipeline.artifact_ids(copied.output("dataset"))) == set(
        pipeline.artifact_ids(generated.output("datasets"))
    )
    copies = executions(root, step_name=copied.step_name)
    assert copies.height == 4  # one execution per unit: the first attempt committed nothing
    assert copies["execution_spec_id"].n_unique() == 4
    assert copies["success"].all()
    index = artifacts(root)
    assert index.height == index["artifact_id"].n_unique()  # nothing indexed twice


def test_a_timed_out_element_commits_its_finished_units_and_fails_the_rest_clearly(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    root = tmp_path / "store"
    pipeline = Pipeline.create("timed-out", root=root, backend="slurm")
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 5})
    stalled = pipeline.run(
        StallOnSecondUnit,
        inputs={"dataset": generated.output("datasets")},
        resources={"time_limit": "1"},  # SLURM's shortest limit: one minute
        execution={"units_per_worker": 3},  # one element runs all three, in order
    )
    summary = pipeline.finalize()

    assert summary["overall_success"] is False
    assert (stalled.succeeded_count, stalled.failed_count) == (1, 2)
    rows = executions(root, step_name=stalled.step_name).sort("started_at").to_dicts()
    assert [row["success"] for row in rows] == [True, False, False]  # the first was kept
    reason = "reached its time limit before this unit finished: raise the operation's time_limit"
    assert reason in rows[1]["error"]  # the stalled unit, interrupted
    assert "WorkerStopping: not started: SLURM job" in rows[2]["error"]  # it never ran
    assert reason in rows[2]["error"]
    for row in rows:
        assert "_log.out <==" in row["worker_log"]  # the element's log, with every unit
    logs = sorted((root / "logs" / "failures").rglob("*.log"))
    assert len(logs) == 2
    assert all("--- worker log" in log.read_text() for log in logs)
    queued = subprocess.run(
        ["squeue", "-h", "-n", f"stemma-{pipeline.run_id[-8:]}"], capture_output=True, text=True
    ).stdout
    assert queued.strip() == ""
    assert set(pipeline.artifact_ids(stalled.output("dataset"))) < set(
        pipeline.artifact_ids(generated.output("datasets"))
    )
