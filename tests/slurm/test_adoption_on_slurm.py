"""A rerun adopts the cluster work of a run whose orchestrator died (issue 20).

The orchestrator of ``adoptable_on_slurm.py`` is killed (``kill -9``) while its middle step's
elements run or wait in the queue. The elements go on; a rerun of the same script waits for
them instead of submitting their units again, and commits what they stage. Each unit start
leaves a file (``adoptable_on_slurm.RAN_DIR``): a unit that ran twice leaves two.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
from typing import Any

import polars as pl
import pytest
from slurm_testing import queued, wait_until

from stemma.core.live import RunStatus, read_state
from stemma.slurm.job_ledger import read_ledger
from stemma.storage import artifacts, executions

pytestmark = pytest.mark.slurm

SCRIPT = pathlib.Path(__file__).with_name("adoptable_on_slurm.py")
SECONDS = "4"
SLOW = "test.counted_slow_scale"


def _env(ran: pathlib.Path) -> dict[str, str]:
    ran.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "STEMMA_TEST_RAN_DIR": str(ran)}


def _start(root: pathlib.Path, ran: pathlib.Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(root), SECONDS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(ran),
        start_new_session=True,
    )
    assert process.stdout is not None
    run_id = process.stdout.readline().strip()
    assert run_id, process.stderr.read() if process.stderr else "no run id"
    return process, run_id


def _run(root: pathlib.Path, ran: pathlib.Path) -> tuple[str, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(root), SECONDS],
        capture_output=True,
        text=True,
        env=_env(ran),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    return lines[0], json.loads(lines[-1])


def _starts(ran: pathlib.Path) -> dict[str, int]:
    """How many times each dataset's unit started."""
    counts: dict[str, int] = {}
    for path in ran.iterdir():
        stem = path.name.split(".", 1)[0]
        counts[stem] = counts.get(stem, 0) + 1
    return counts


def _tables(root: pathlib.Path) -> tuple[list[str], dict[str, list[str]]]:
    """The artifact ids, and per step the execution keys of its successful rows."""
    ids = sorted(artifacts(root)["artifact_id"].to_list())
    rows = executions(root).filter(pl.col("success"))
    keys = {
        str(name): sorted(group["execution_spec_id"].to_list())
        for (name,), group in rows.group_by("step_name")
    }
    return ids, keys


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, list[str]]]:
    """A clean run's tables, for every case to compare with."""
    base = tmp_path_factory.mktemp("clean")
    _, summary = _run(base / "store", base / "ran")
    assert summary["overall_success"] is True, summary
    return _tables(base / "store")


def test_a_rerun_waits_for_the_elements_a_killed_orchestrator_left_and_runs_nothing_twice(
    tmp_path: pathlib.Path, slurm_cluster: None, clean: tuple[list[str], dict[str, list[str]]]
) -> None:
    root, ran = tmp_path / "store", tmp_path / "ran"
    process, first = _start(root, ran)
    tag = f"stemma-{first[-8:]}"
    wait_until(lambda: queued(f"{tag}-s1", "RUNNING"), 120, "the slow step's elements to run")
    os.killpg(process.pid, signal.SIGKILL)  # the orchestrator (its jobs are not in its group)
    process.communicate(timeout=30)  # (and its pipes closed)
    assert queued(f"{tag}-s1"), "the elements should outlive their orchestrator"
    assert read_state(root, first).status is RunStatus.STALE

    second, summary = _run(root, ran)

    assert summary["overall_success"] is True, summary
    starts = _starts(ran)
    assert len(starts) == 6, starts  # every dataset's unit ran…
    assert set(starts.values()) == {1}, starts  # …once, across both orchestrators
    ids, keys = _tables(root)
    assert ids == clean[0]
    assert keys == clean[1]  # one row per unit, the same keys as a clean run's
    # The rerun sent only what was not in flight: its ledger lists the adopted elements (with
    # the first run's array ids) and no new array for their keys.
    ledger = list(read_ledger(root / "runs" / second / "slurm_jobs.jsonl"))
    adopted = [entry for entry in ledger if entry.job_name.startswith(tag)]
    assert adopted, ledger
    assert not queued(tag)
    assert not queued(f"stemma-{second[-8:]}")
