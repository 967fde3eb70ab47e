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

from stemma.core.live import RunStatus, list_states, read_state
from stemma.slurm.job_ledger import read_ledger
from stemma.storage import artifacts, executions

pytestmark = pytest.mark.slurm

SCRIPT = pathlib.Path(__file__).with_name("adoptable_on_slurm.py")
LAZY = pathlib.Path(__file__).with_name("adoptable_lazy.py")
SECONDS = "3"
START_SCRIPT = pathlib.Path(__file__).parents[2] / "scripts" / "slurm-dev-cluster.sh"


def _env(ran: pathlib.Path) -> dict[str, str]:
    ran.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "STEMMA_TEST_RAN_DIR": str(ran)}


def _start(
    root: pathlib.Path, ran: pathlib.Path, script: pathlib.Path = SCRIPT
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(script), str(root), SECONDS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(ran),
        start_new_session=True,
    )


def _run_id(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    run_id = process.stdout.readline().strip()
    assert run_id, process.stderr.read() if process.stderr else "no run id"
    return run_id


def _kill(process: subprocess.Popen[str]) -> None:
    """``kill -9`` the orchestrator (its jobs are not in its process group)."""
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)  # (and its pipes closed)


def _finish(
    root: pathlib.Path, ran: pathlib.Path, script: pathlib.Path = SCRIPT, *backend: str
) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(script), str(root), SECONDS, *backend],
        capture_output=True,
        text=True,
        env=_env(ran),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def _run(root: pathlib.Path, ran: pathlib.Path, *backend: str) -> tuple[str, dict[str, Any]]:
    lines = _finish(root, ran, SCRIPT, *backend)
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


def _restart_controller() -> None:
    """Stop slurmctld and start it again (jobs on the node run on; the controller recovers them
    from its saved state)."""
    subprocess.run(["pkill", "-x", "slurmctld"], check=False)
    wait_until(
        lambda: subprocess.run(["pgrep", "-x", "slurmctld"], check=False).returncode != 0,
        60,
        "slurmctld to stop",
    )
    subprocess.run(["bash", str(START_SCRIPT), "start"], check=True, capture_output=True)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, list[str]]]:
    """A clean run's tables, for every case to compare with.

    Run on the local backend: keys and artifact ids never depend on where units ran.
    """
    base = tmp_path_factory.mktemp("clean")
    _, summary = _run(base / "store", base / "ran", "local")
    assert summary["overall_success"] is True, summary
    return _tables(base / "store")


def test_a_rerun_waits_for_what_a_killed_orchestrator_left_and_runs_only_the_dead_again(
    tmp_path: pathlib.Path, slurm_cluster: None, clean: tuple[list[str], dict[str, list[str]]]
) -> None:
    root, ran = tmp_path / "store", tmp_path / "ran"
    process = _start(root, ran)
    first = _run_id(process)
    tag = f"stemma-{first[-8:]}"
    wait_until(lambda: queued(f"{tag}-s1", "RUNNING"), 120, "the slow step's elements to run")
    _kill(process)
    assert queued(f"{tag}-s1"), "the elements should outlive their orchestrator"
    assert read_state(root, first).status is RunStatus.STALE
    # While nobody watches, one running element dies, and the controller restarts.
    victim = queued(f"{tag}-s1", "RUNNING")[0].split("|")[0]
    wait_until(
        lambda: any(p.read_text() == victim for p in ran.iterdir()), 60, f"{victim} to start"
    )
    subprocess.run(["scancel", "--signal=KILL", "--full", victim], check=True)
    wait_until(lambda: victim not in str(queued(tag)), 60, f"{victim} to leave the queue")
    [killed] = [p.name.split(".")[0] for p in ran.iterdir() if p.read_text() == victim]
    _restart_controller()
    assert queued(f"{tag}-s1"), "the controller should have recovered the other elements"

    second, summary = _run(root, ran)

    assert summary["overall_success"] is True, summary
    starts = _starts(ran)
    assert len(starts) == 6, starts  # every dataset's unit ran: the dead element's again…
    assert starts == {**dict.fromkeys(starts, 1), killed: 2}, starts  # …and the others once
    ids, keys = _tables(root)
    assert ids == clean[0]
    assert keys == clean[1]  # one row per unit, the same keys as a clean run's
    # The rerun sent only what was not in flight: its ledger lists the adopted elements (with
    # the first run's array ids) before its own array for the dead element's unit.
    ledger = list(read_ledger(root / "runs" / second / "slurm_jobs.jsonl"))
    assert ledger[0].job_name.startswith(tag), ledger
    assert [len(keys) for e in ledger[1:] if e.step_number == 1 for keys in e.keys] == [1]
    assert not queued(tag)
    assert not queued(f"stemma-{second[-8:]}")


def test_a_chain_of_killed_orchestrators_each_adopting_the_last_runs_every_unit_once(
    tmp_path: pathlib.Path, slurm_cluster: None, clean: tuple[list[str], dict[str, list[str]]]
) -> None:
    root, ran = tmp_path / "store", tmp_path / "ran"
    # The first is killed as soon as sbatch returned (its elements still wait in the queue)…
    process = _start(root, ran)
    first = _run_id(process)
    ledger = root / "runs" / first / "slurm_jobs.jsonl"
    wait_until(
        lambda: any(e.step_number == 1 for e in read_ledger(ledger)), 120, "the slow step's array"
    )
    _kill(process)
    # …the second adopts them, and is killed once some have finished and staged…
    process = _start(root, ran)
    second = _run_id(process)
    adopted = root / "runs" / second / "slurm_jobs.jsonl"
    wait_until(lambda: list(read_ledger(adopted)), 120, "the second run to adopt the elements")
    logs = root / "logs" / "slurm" / first
    wait_until(lambda: list(logs.glob("*_result.pkl")), 120, "an adopted element to finish")
    _kill(process)
    # …and the third recovers what they staged, adopts the rest from the second's ledger (the
    # first's too: the same elements), and finishes.
    third, summary = _run(root, ran)

    assert summary["overall_success"] is True, summary
    starts = _starts(ran)
    assert len(starts) == 6, starts
    assert set(starts.values()) == {1}, starts
    assert _tables(root) == clean
    lines = list(read_ledger(adopted))
    assert [e.job_name[:15] for e in lines] == [f"stemma-{first[-8:]}"], lines
    assert not queued(f"stemma-{third[-8:]}-s1"), "the third sent nothing of the slow step"


def test_a_lazy_rerun_waits_for_the_leaves_a_killed_run_left_running(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    root, ran = tmp_path / "store", tmp_path / "ran"
    process = _start(root, ran, LAZY)
    wait_until(lambda: list_states(root), 60, "the lazy run's state")
    (state,) = list_states(root)
    tag = f"stemma-{state.run_id[-8:]}"
    wait_until(lambda: queued(tag, "RUNNING"), 120, "the leaves' elements to run")
    _kill(process)

    lines = _finish(root, ran, LAZY)

    assert lines[-1] == str(sum(i * i for i in range(6)))
    starts = _starts(ran)
    assert len(starts) == 6, starts
    assert set(starts.values()) == {1}, starts  # no leaf ran twice
    rerun = next(s for s in list_states(root) if s.run_id != state.run_id)
    ledger = list(read_ledger(root / "runs" / rerun.run_id / "slurm_jobs.jsonl"))
    assert any(entry.job_name.startswith(tag) for entry in ledger), ledger
