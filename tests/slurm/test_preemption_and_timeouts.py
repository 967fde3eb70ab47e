"""Elements the scheduler takes back: a requeue (preemption) reruns them, a timeout fails them.

Either way no unit is lost and none is committed twice: a requeued element's units run again
from the start and are committed once, when the element's second attempt returns; a timed-out
element's units are recorded as failures with the scheduler's reason and the element's log.
"""

import os
import pathlib
import subprocess
import threading
import time
from typing import Any

import polars as pl
import pytest
from slurm_tasks import MarkThenSleep, StallOnSecondUnit
from slurm_testing import flaky_command, queued

from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline
from stemma.core.run_ids import run_tag
from stemma.storage import artifacts, executions

pytestmark = pytest.mark.slurm

REQUEUE_TIMED_OUT = "slurm_requeue error: Socket timed out on send/recv operation"


def _lines(*argv: str) -> list[str]:
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def _running_elements(tag: str) -> list[str]:
    return [line.split("|")[0] for line in queued(tag, "RUNNING") if f"|{tag}-s1-" in line]


def _preempt_once_started(
    tag: str, marker: pathlib.Path, preempt: list[str], preempted: list[str], stop: threading.Event
) -> None:
    """Once a unit of step 1 has begun, preempt its element with ``preempt + [its id]``, once.

    Once only, whatever the command's exit code: scancel can fail for one of the job's steps
    and still signal the others.
    """
    while not stop.is_set():
        running = set(_running_elements(tag))
        started = {
            path.name.rpartition(".")[2] for path in marker.parent.glob(f"{marker.name}.started.*")
        }
        if chosen := sorted(running & started):
            _once([*preempt, chosen[0]])
            preempted.append(chosen[0])
            return
        time.sleep(0.2)


def _once(argv: list[str]) -> None:
    """Run a SLURM command, and stop scancel rather than let it try again.

    scancel signals a job "in a transitional state" again 5 s later, which reaches the
    requeued attempt as it starts, before Python has set its handlers, and kills it. No
    scheduler sends its warning twice.
    """
    verbose = ["-v"] if argv[0] == "scancel" else []
    with subprocess.Popen(
        [argv[0], *verbose, *argv[1:]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as command:
        assert command.stderr is not None
        for line in command.stderr:
            if "retrying" in line:  # "Job is in transitional state, retrying"
                command.kill()


def _failures(root: pathlib.Path, step_name: str, job_id: str) -> str:
    """What a failed step recorded, and what the scheduler says of the preempted element."""
    failed = executions(root, step_name=step_name).filter(~pl.col("success"))
    rows = failed.select("error", "worker_log").rows()
    sacct = _lines("sacct", "-P", "--duplicates", "-j", job_id, "-o", "JobID,State,ExitCode")
    return f"failed units: {rows}; sacct: {sacct}"


def _sacct_states(job_id: str) -> list[str]:
    """Every state the element went through, earlier attempts included (``--duplicates``)."""
    lines = _lines("sacct", "-n", "-X", "-P", "--duplicates", "-j", job_id, "-o", "State")
    return [line.split()[0] for line in lines]


@pytest.mark.parametrize(
    ("preempt", "dropped_requeues"),
    [
        (["scontrol", "requeue"], 0),  # the controller takes the element back (SIGTERM, requeue)
        (["scancel", "--signal=USR2"], 0),  # the warning signal, far from the time limit:
        # submitit reads it as a preemption and asks SLURM to requeue the job itself
        (["scancel", "--signal=USR2"], 1),  # and a loaded controller drops that request once
    ],
    ids=["scontrol-requeue", "warning-signal", "warning-signal-requeue-dropped"],
)
def test_a_requeued_element_reruns_its_units_and_commits_them_once(
    slurm_cluster: None,
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    preempt: list[str],
    dropped_requeues: int,
) -> None:
    requeues = flaky_command(
        tmp_path / "bin", "scontrol", dropped_requeues, REQUEUE_TIMED_OUT, subcommand="requeue"
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")  # elements inherit it
    root = tmp_path / "store"
    pipeline = Pipeline.create("preempted", root=root, backend="slurm")
    generated = pipeline.run(DataGenerator, params={"count": 4, "rows": 5})
    requeued: list[str] = []
    stop = threading.Event()
    preempter = threading.Thread(
        target=_preempt_once_started,
        args=(run_tag(pipeline.run_id), root.parent / "marker", preempt, requeued, stop),
        daemon=True,
    )
    preempter.start()
    try:
        copied = pipeline.run(
            MarkThenSleep,
            inputs={"dataset": generated.output("datasets")},
            params={"marker": str(root.parent / "marker"), "seconds": 4.0},
            resources={"time_limit": "30"},  # over 10 minutes: submitit can tell a preemption
            execution={"max_workers": 2},
        )
    finally:
        stop.set()
        preempter.join(5)
    summary = pipeline.finalize()

    assert len(requeued) == 1, "no element of the slow step was seen running"
    assert "REQUEUED" in _sacct_states(requeued[0])  # the element really was taken back
    assert summary["overall_success"] is True, _failures(root, copied.step_name, requeued[0])
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
    if preempt[0] == "scancel":  # the element asked, and asked again after a dropped request
        assert len(requeues.read_text().splitlines()) == 1 + dropped_requeues


def _warn_when_stalled(tag: str, marker: pathlib.Path, stop: threading.Event) -> None:
    """Send the element SLURM's time-limit warning once its second unit has begun to stall."""
    while not stop.is_set():
        running = _running_elements(tag)
        if running and pathlib.Path(f"{marker}.stalled").exists():
            _lines("scancel", "--signal=USR2", running[0])  # what --signal=USR2@30 sends
            return
        time.sleep(0.2)


def _stalling_step(root: pathlib.Path, time_limit: str, *, warn: bool) -> tuple[Pipeline, Any]:
    """Three datasets, then one element of three units whose second unit stalls."""
    pipeline = Pipeline.create("timed-out", root=root, backend="slurm")
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 5})
    stop = threading.Event()
    warner = threading.Thread(
        target=_warn_when_stalled,
        args=(run_tag(pipeline.run_id), root / "marker", stop),
        daemon=True,
    )
    if warn:
        warner.start()
    try:
        stalled = pipeline.run(
            StallOnSecondUnit,
            inputs={"dataset": generated.output("datasets")},
            params={"marker": str(root / "marker")},
            resources={"time_limit": time_limit},
            execution={"units_per_worker": 3},  # one element runs all three, in order
        )
    finally:
        stop.set()
    pipeline.finalize()
    return pipeline, stalled


REASON = "reached its time limit before this unit finished: raise the operation's time_limit"


def test_the_time_limit_warning_commits_finished_units_and_fails_the_rest_clearly(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    root = tmp_path / "store"
    pipeline, stalled = _stalling_step(root, "10", warn=True)

    assert (stalled.succeeded_count, stalled.failed_count) == (1, 2)
    rows = executions(root, step_name=stalled.step_name).sort("started_at").to_dicts()
    assert [row["success"] for row in rows] == [True, False, False]  # the first was kept
    assert REASON in rows[1]["error"]  # the stalled unit, interrupted
    assert "WorkerStopping: not started: SLURM job" in rows[2]["error"]  # it never ran
    assert REASON in rows[2]["error"]
    for row in rows:
        assert "_log.out <==" in row["worker_log"]  # the element's log, with every unit
    assert "(most recent call first)" in rows[1]["worker_log"]  # where it was when warned
    assert "refusal" in rows[1]["worker_log"]  # (the stalled unit's own frame)
    logs = sorted((root / "logs" / "failures").rglob("*.log"))
    assert len(logs) == 2
    assert all("--- worker log" in log.read_text() for log in logs)
    assert queued(run_tag(pipeline.run_id)) == []  # the element ended by itself
    assert len(pipeline.artifact_ids(stalled.output("dataset"))) == 1


def test_a_real_time_limit_loses_no_unit_and_says_why_each_failed(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    root = tmp_path / "store"
    # SLURM warns 30 s before the limit, or up to a minute earlier: 30 to 90 s in, when the
    # first unit (a second's work) is long done.
    pipeline, stalled = _stalling_step(root, "2", warn=False)

    rows = executions(root, step_name=stalled.step_name).sort("started_at").to_dicts()
    why = [(row["success"], row["error"], row["worker_log"]) for row in rows]
    assert (stalled.succeeded_count, stalled.failed_count) == (1, 2), why
    assert [row["success"] for row in rows] == [True, False, False]  # every unit, once
    assert REASON in rows[1]["error"]
    assert "not started" in rows[2]["error"]
    for row in rows:
        assert "_log.out <==" in row["worker_log"]
    assert queued(run_tag(pipeline.run_id)) == []
