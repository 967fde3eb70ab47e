"""The slurm-intra backend: srun steps inside an salloc on the local cluster."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from stemma.core.backends.registry import open_backend
from stemma.slurm import NotInAllocationError

pytestmark = pytest.mark.slurm

HERE = pathlib.Path(__file__).parent
_SALLOC = ["salloc", "-N1", "-n1", "-c2", "--mem=1G", "--time=5", "-J", "stemma-intra-test"]

_INSIDE = """
import json, os, sys
from stemma.core.backends.registry import open_backend
import slurm_tasks
backend = open_backend("slurm-intra", max_workers=2)
squares = [f.result(timeout=120) for f in [backend.submit(slurm_tasks.square, n) for n in range(4)]]
places = {backend.submit(slurm_tasks.where, None).result(timeout=120) for _ in range(2)}
try:
    backend.submit(slurm_tasks.fail, "row 3 is corrupt").result(timeout=120)
except ValueError as error:
    failed = str(error)
backend.shutdown()
print(json.dumps({"job": os.environ["SLURM_JOB_ID"], "squares": squares,
                  "places": sorted(places), "failed": failed}))
"""


def test_slurm_intra_refuses_outside_an_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    with pytest.raises(NotInAllocationError, match="salloc"):
        open_backend("slurm-intra")


def test_slurm_intra_runs_units_as_steps_of_the_salloc(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(HERE), "STEMMA_ROOT": str(tmp_path / "store")}
    done = subprocess.run(
        [*_SALLOC, sys.executable, "-c", _INSIDE],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["squares"] == [0, 1, 4, 9]
    assert report["failed"] == "row 3 is corrupt"
    assert {job for job, _ in report["places"]} == {report["job"]}
    assert all(step is not None for _, step in report["places"])


_CANCEL_INSIDE = """
import glob, json, os, subprocess, sys, time
from stemma.core.backends.base import WorkerCrashedError
from stemma.core.backends.registry import open_backend
from stemma.core.cancel_levels import CancelLevel
import slurm_tasks
flag = sys.argv[1]
backend = open_backend("slurm-intra", max_workers=2)
futures = [backend.submit(slurm_tasks.wait_for_file, flag) for _ in range(3)]
deadline = time.monotonic() + 90
while not glob.glob(flag + ".started.*") and time.monotonic() < deadline:
    time.sleep(0.2)
time.sleep(1)
backend.cancel(CancelLevel[sys.argv[2]])
outcomes = []
for future in futures:
    try:
        future.result(timeout=60)
        outcomes.append("finished")
    except WorkerCrashedError:
        outcomes.append("crashed")
    except BaseException as error:
        outcomes.append(type(error).__name__)
def stemma_steps():
    out = subprocess.run(["squeue", "-h", "-s", "-j", os.environ["SLURM_JOB_ID"], "-o", "%j"],
                         capture_output=True, text=True).stdout.split()
    return [step for step in out if step.startswith("stemma-")]
deadline = time.monotonic() + 30  # a killed step stays listed for a moment
while stemma_steps() and time.monotonic() < deadline:
    time.sleep(0.2)
steps = stemma_steps()
print(json.dumps({"outcomes": outcomes, "steps": steps}))
"""


@pytest.mark.parametrize("level", ["FORCE", "HARD"])
def test_slurm_intra_cancel_kills_its_steps(
    slurm_cluster: None, tmp_path: pathlib.Path, level: str
) -> None:
    env = {**os.environ, "PYTHONPATH": str(HERE), "STEMMA_ROOT": str(tmp_path / "store")}
    flag = tmp_path / "release"  # never created
    done = subprocess.run(
        [*_SALLOC, sys.executable, "-c", _CANCEL_INSIDE, str(flag), level],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "finished" not in report["outcomes"]
    assert "crashed" in report["outcomes"]
    assert [step for step in report["steps"] if step.startswith("stemma-")] == []
