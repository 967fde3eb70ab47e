"""A rerun inside the same allocation adopts the srun steps a killed orchestrator left (issue 20).

Inside one ``salloc``, ``adoptable_on_slurm.py`` runs on ``slurm-intra``; once its slow step's
``srun`` steps run, its orchestrator process alone is killed (``kill -9`` of its pid, as the
OOM killer does): its ``srun`` clients live on, and so do their steps. The units wait at a
gate, opened once the rerun's srun ledger lists the steps it adopted. Every unit start leaves a
file (``adoption_tasks``): a unit that ran twice leaves two.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest
from adoption_runs import tables, unit_starts

from stemma.slurm.intra_ledger import STEPS_LEDGER, read_steps

pytestmark = pytest.mark.slurm

HERE = pathlib.Path(__file__).parent
_SALLOC = ["salloc", "-N1", "-n1", "-c2", "--mem=1G", "--time=5", "-J", "stemma-intra-adopt"]

_DRIVER = """
import json, os, pathlib, signal, subprocess, sys, time
from adoption_runs import SCRIPT, SECONDS, first_line, run_env
from stemma.core.run_ids import run_tag
from stemma.slurm.intra_ledger import STEPS_LEDGER, read_steps
root, ran, gate = (pathlib.Path(arg) for arg in sys.argv[1:4])

def start():
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), str(root), SECONDS, "slurm-intra"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=run_env(ran, gate=gate), start_new_session=True,
    )

def steps(prefix):
    out = subprocess.run(["squeue", "-h", "-s", "-j", os.environ["SLURM_JOB_ID"], "-o", "%j"],
                         capture_output=True, text=True, check=True).stdout.split()
    return sorted(name for name in out if name.startswith(prefix))

def poll(check, seconds):
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.2)
    return check()

first = start()
first_id = first_line(first)
slow = f"{run_tag(first_id)}-s1-"
poll(lambda: steps(slow), 120)
os.kill(first.pid, signal.SIGKILL)  # the orchestrator process only, not its srun clients
first.communicate(timeout=30)
outlived = steps(slow)
rerun = start()
second = first_line(rerun)
ledger = root / "runs" / second / STEPS_LEDGER
poll(lambda: any(e.step_name.startswith(slow) for e in read_steps(ledger)), 120)
gate.touch()
out, err = rerun.communicate(timeout=240)
print(json.dumps({"first": first_id, "second": second, "outlived": outlived,
                  "code": rerun.returncode, "out": out, "err": err[-3000:]}))
"""


def test_a_rerun_in_the_allocation_waits_for_the_steps_a_killed_orchestrator_left(
    tmp_path: pathlib.Path,
    slurm_cluster: None,
    clean_adoptable: tuple[list[str], dict[str, list[str]]],
) -> None:
    root, ran, gate = tmp_path / "store", tmp_path / "ran", tmp_path / "gate"
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    done = subprocess.run(
        [*_SALLOC, sys.executable, "-c", _DRIVER, str(root), str(ran), str(gate)],
        capture_output=True,
        text=True,
        env=env,
        timeout=290,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, report["err"]
    assert json.loads(report["out"].splitlines()[-1])["overall_success"] is True, report["out"]
    assert report["outlived"], "the steps should outlive their orchestrator process"
    starts = unit_starts(ran)
    assert len(starts) == 6, starts
    assert starts == dict.fromkeys(starts, 1), starts  # each unit once, across both runs
    assert tables(root) == clean_adoptable  # one row per unit, a clean run's keys and ids
    # The rerun recorded the steps it waited for, under the first run's step names and keys.
    recorded = list(read_steps(root / "runs" / report["second"] / STEPS_LEDGER))
    adopted = {e.step_name: e.keys for e in recorded if e.step_name in report["outlived"]}
    started = {
        e.step_name: e.keys for e in read_steps(root / "runs" / report["first"] / STEPS_LEDGER)
    }
    assert adopted == {name: started[name] for name in report["outlived"]}, recorded
