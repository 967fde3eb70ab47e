"""A rerun adopts the cluster work of a run whose orchestrator died (issue 20).

The orchestrator of ``adoptable_on_slurm.py`` is killed (``kill -9``) while its middle step's
elements run. The elements go on; while nobody watches, one of them dies and the controller
restarts; a rerun of the same script waits for the live ones instead of submitting their units
again, commits what they stage, and sends the dead element's unit again, once. Each unit start
leaves a file (``adoption_tasks``): a unit that ran twice leaves two. The kill points one by
one are in ``test_adoption_kill_points``.
"""

import json
import pathlib
import subprocess
from collections import Counter

import pytest
from adoption_runs import (
    element_runs_per_key,
    finish_pipeline,
    first_line,
    kill,
    ledger,
    start,
    tables,
    unit_starts,
)
from slurm_testing import queued, wait_until

from stemma.core.live import RunStatus, read_state
from stemma.core.run_ids import run_tag

pytestmark = pytest.mark.slurm

START_SCRIPT = pathlib.Path(__file__).parents[2] / "scripts" / "slurm-dev-cluster.sh"


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


def test_a_rerun_waits_for_what_a_killed_orchestrator_left_and_runs_only_the_dead_again(
    tmp_path: pathlib.Path,
    slurm_cluster: None,
    clean_adoptable: tuple[list[str], dict[str, list[str]]],
) -> None:
    root, ran = tmp_path / "store", tmp_path / "ran"
    process = start(root, ran)
    first = first_line(process)
    tag = f"stemma-{first[-8:]}"
    wait_until(lambda: queued(f"{tag}-s1", "RUNNING"), 120, "the slow step's elements to run")
    kill(process)
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

    second, summary = finish_pipeline(root, ran)

    assert summary["overall_success"] is True, summary
    starts = unit_starts(ran)
    assert len(starts) == 6, starts  # every dataset's unit ran: the dead element's again…
    assert starts == {**dict.fromkeys(starts, 1), killed: 2}, starts  # …and the others once
    assert tables(root) == clean_adoptable  # one row per unit, a clean run's keys and ids
    runs = element_runs_per_key(root)  # as sacct counts element runs, per execution key
    assert Counter(runs.values()) == {1: len(runs) - 1, 2: 1}, runs
    # The rerun sent only what was not in flight: its ledger lists the adopted elements (with
    # the first run's array ids) before its own array for the dead element's unit.
    sent = ledger(root, second)
    assert sent[0].job_name.startswith(tag), sent
    assert [len(keys) for e in sent[1:] if e.step_number == 1 for keys in e.keys] == [1]
    assert not queued(tag)
    assert not queued(f"stemma-{second[-8:]}")


def test_an_adopted_element_that_dies_just_after_staging_is_committed_from_its_staging(
    tmp_path: pathlib.Path,
    slurm_cluster: None,
    clean_adoptable: tuple[list[str], dict[str, list[str]]],
) -> None:
    root, ran, gate = tmp_path / "store", tmp_path / "ran", tmp_path / "gate"
    # The first of the slow step's elements to stage is killed just after its sentinel (the
    # generator's was the first); the elements wait at a gate opened once the rerun watches.
    crash_at = "staging.sentinel:2"
    process = start(root, ran, crash_at=crash_at, gate=gate)
    first = first_line(process)
    wait_until(lambda: queued(f"{run_tag(first)}-s1", "RUNNING"), 120, "the elements to run")
    kill(process)
    rerun = start(root, ran)
    second = first_line(rerun)
    wait_until(lambda: ledger(root, second), 120, "the rerun to adopt the elements")
    gate.touch()
    out, err = rerun.communicate(timeout=300)

    assert rerun.returncode == 0, err[-3000:]
    assert json.loads(out.splitlines()[-1])["overall_success"] is True, out
    (slow,) = [entry for entry in ledger(root, first) if entry.step_number == 1]
    results = list((root / "logs" / "slurm" / first).glob(f"{slow.job_id}_*_result.pkl"))
    assert len(results) == slow.elements - 1, results  # one died after staging, unreported
    # The dead element's unit was taken from what it staged: not sent again, committed once.
    assert set(unit_starts(ran).values()) == {1}, unit_starts(ran)
    assert tables(root) == clean_adoptable
    assert set(element_runs_per_key(root).values()) == {1}
