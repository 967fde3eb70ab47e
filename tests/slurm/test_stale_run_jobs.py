"""A SLURM run whose orchestrator was killed: status shows its elements still in the scheduler,
and reap asks before it cancels what `stemma resume` could wait for.

On the real local cluster: no TTY and no --yes refuses (exit 2, naming --yes); a "no" on a
terminal cancels nothing; --yes cancels, and squeue holds nothing of the run after.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import pytest
from slurm_testing import queued, wait_until

from stemma.core.exit_codes import ExitCode
from stemma.core.runs.alive_jobs import alive_jobs
from stemma.slurm.reap import reap

pytestmark = pytest.mark.slurm

STEMMA = pathlib.Path(sys.executable).parent / "stemma"
_PIPELINE = """
import sys
from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline
pipeline = Pipeline.create("orphaned", root=sys.argv[1], backend="slurm")
generated = pipeline.run(DataGenerator, params={"count": 2})
print(pipeline.run_id, flush=True)
pipeline.run(SlowCopy, inputs={"dataset": generated.output("datasets")}, params={"seconds": 300})
"""


def _killed_with_elements_queued(root: pathlib.Path) -> str:
    """Start the pipeline, SIGKILL it once its slow step's elements are in squeue: its run id."""
    with subprocess.Popen(
        [sys.executable, "-c", _PIPELINE, str(root)], stdout=subprocess.PIPE, text=True
    ) as orchestrator:
        try:
            assert orchestrator.stdout is not None
            run_id = orchestrator.stdout.readline().strip()
            tag = f"stemma-{run_id[-8:]}"
            wait_until(lambda: any("-s1-" in line for line in queued(tag)), 90, "the slow step")
        finally:
            os.kill(orchestrator.pid, signal.SIGKILL)
    return run_id


def _stemma(root: pathlib.Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STEMMA), "--root", str(root), *argv],
        stdin=subprocess.DEVNULL,  # no terminal: as from a script or cron
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _reap_answering(root: pathlib.Path, run_id: str, answer: str) -> tuple[int, str]:
    """``stemma reap RUN`` with a real terminal on stdin, answering its question."""
    leader, follower = os.openpty()
    try:
        with subprocess.Popen(
            [str(STEMMA), "--root", str(root), "reap", run_id],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        ) as reaping:
            os.write(leader, answer.encode())
            out, _ = reaping.communicate(timeout=120)
            return reaping.returncode, out
    finally:
        os.close(leader)
        os.close(follower)


def test_slurm_stale_run_shows_its_queued_elements_and_reap_asks_before_cancelling_them(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    root = tmp_path / "store"
    run_id = _killed_with_elements_queued(root)
    tag = f"stemma-{run_id[-8:]}"
    try:
        # The first step's element can linger in squeue (completing) after its result was read:
        # counted here and gone a moment later, it would make the counts below disagree.
        wait_until(
            lambda: {e.step_number for e in alive_jobs(root, run_id).elements} == {1},
            60,
            "only the slow step's elements in squeue",
        )
        jobs = alive_jobs(root, run_id)
        assert jobs.problem == ""
        assert jobs.elements
        assert jobs.adoptable == len(jobs.elements)  # the ledger names their execution keys
        assert {e.state for e in jobs.elements} <= {"PENDING", "RUNNING"}

        status = _stemma(root, "status", run_id)
        assert status.returncode == ExitCode.OK, status.stderr
        assert f"run {run_id}: stale (orchestrator gone)" in status.stdout
        assert f"{len(jobs.elements)} element" in status.stdout, status.stdout
        assert "still in the scheduler" in status.stdout
        assert f"step 1: {jobs.elements[0].element} " in status.stdout
        assert f"`stemma resume {run_id}` starts it again and waits for them" in status.stdout

        refused = _stemma(root, "reap", run_id)
        assert refused.returncode == ExitCode.USAGE, refused.stdout + refused.stderr
        assert "pass --yes" in refused.stderr
        assert f"`stemma resume {run_id}` could wait for" in refused.stderr
        assert queued(tag), "a refused reap cancelled jobs"

        code, said = _reap_answering(root, run_id, "n\n")
        assert code == ExitCode.OK, said
        assert "cancel them and settle the run? [y/N]" in said
        assert "nothing cancelled" in said
        assert queued(tag), "a declined reap cancelled jobs"

        reaped = _stemma(root, "reap", run_id, "--yes")
        assert reaped.returncode == ExitCode.OK, reaped.stdout + reaped.stderr
        assert "slurm: cancelled 1 jobs" in reaped.stdout
        assert not queued(tag)
        assert alive_jobs(root, run_id).elements == ()
    finally:
        reap(run_id, root=root, wait_seconds=0)  # a failed assertion leaves no job behind
