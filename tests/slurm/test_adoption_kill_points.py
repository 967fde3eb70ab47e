"""The orchestrator killed at each point of a SLURM run, each rerun adopting what the last left.

Issue 20's five kill points, for the three-step pipeline and for a lazy graph, as one chain per
front door: every run is ``kill -9``-ed at the next point, and the run after it adopts what the
dead ones left in the queue, commits what they staged, and sends only what nobody computes.

1. right after sbatch returned (the crash point after the job ledger's line);
2. while the elements run;
3. once some elements have finished and staged (the orchestrator frozen first, so it commits
   none of them: they are found staged by the next run);
4. in the middle of the commit of what the elements staged (the crash point after the first
   ``artifacts.index`` append);
5. after the last element finished and before finalize (frozen once its last array is out).

The chain ends with ``stemma resume`` of the pipeline's last run (a plain rerun of the lazy
script). Then the tables equal a clean run's, and no unit ran twice: neither by its start files
nor by sacct, counting element runs per execution key over every run's ledger.
"""

import pathlib
import subprocess
import sys
import time

import pytest
from adoption_runs import (
    LAZY,
    crashed,
    element_runs_per_key,
    finish,
    first_line,
    freeze,
    kill,
    ledger,
    run_env,
    start,
    tables,
    unit_starts,
)
from slurm_testing import queued, wait_until

from stemma.core.live import RunStatus, list_states, read_state
from stemma.core.run_ids import run_tag

pytestmark = pytest.mark.slurm

STEMMA = pathlib.Path(sys.executable).parent / "stemma"
COMMIT = "delta.append.artifacts.index:1"
"""Point 4: the first append of a commit of staged units (step 0 was committed by run 1)."""


def _results(root: pathlib.Path) -> list[pathlib.Path]:
    """The result files of every element that finished, whichever run sent it."""
    return list((root / "logs" / "slurm").glob("*/*_result.pkl"))


def _sent(root: pathlib.Path, run_id: str, name: str) -> bool:
    """Whether run ``run_id`` sent an array whose job name holds ``name``."""
    return any(name in entry.job_name for entry in ledger(root, run_id))


def _resume(root: pathlib.Path, ran: pathlib.Path, run_id: str) -> str:
    """``stemma resume RUN_ID``, waited for to its end: the new run's id."""
    done = subprocess.run(
        [str(STEMMA), "--root", str(root), "resume", run_id],
        capture_output=True,
        text=True,
        env=run_env(ran),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    new = done.stdout.strip()
    deadline = time.monotonic() + 300
    while read_state(root, new).status is RunStatus.RUNNING:
        assert time.monotonic() < deadline, "the resumed run never finished"
        time.sleep(0.5)  # another process's state file: nothing to await
    return new


def _killed_while_running(
    root: pathlib.Path, process: subprocess.Popen[str], run_id: str, dead: str
) -> None:
    """Point 2: ``kill -9`` once the run adopted the dead run's elements and they run."""
    wait_until(lambda: ledger(root, run_id), 120, "the run to adopt the elements")
    wait_until(lambda: queued(run_tag(dead), "RUNNING"), 120, "the elements to run")
    kill(process)


def _killed_once_some_finished(
    root: pathlib.Path, process: subprocess.Popen[str], run_id: str
) -> None:
    """Point 3: frozen once it adopted the elements, killed once one finished and staged."""
    wait_until(lambda: ledger(root, run_id), 120, "the run to adopt the elements")
    freeze(process)  # (so that it commits nothing they stage)
    wait_until(lambda: _results(root), 120, "an element to finish")
    kill(process)


def _killed_once_the_last_ended(
    root: pathlib.Path, process: subprocess.Popen[str], run_id: str, last: str
) -> None:
    """Point 5: frozen once its last array (named with ``last``) is out, killed once it ended."""
    wait_until(lambda: _sent(root, run_id, last), 180, "the last array")
    freeze(process)
    wait_until(lambda: not queued(run_tag(run_id)), 120, "the last element to end")
    kill(process)


def _assert_each_unit_ran_once(root: pathlib.Path, ran: pathlib.Path) -> None:
    starts = unit_starts(ran)
    assert len(starts) == 6, starts
    assert set(starts.values()) == {1}, starts
    runs = element_runs_per_key(root)
    assert runs, "sacct knows none of the ledgers' elements"
    assert set(runs.values()) == {1}, {key: n for key, n in runs.items() if n != 1}


def test_a_pipeline_killed_at_each_point_then_resumed_runs_every_unit_once(
    tmp_path: pathlib.Path,
    slurm_cluster: None,
    clean_adoptable: tuple[list[str], dict[str, list[str]]],
) -> None:
    root, ran = tmp_path / "store", tmp_path / "ran"
    # 1. Right after the slow step's sbatch returned (the generator's array was the first).
    process = start(root, ran, crash_at="slurm.ledger:2")
    first = first_line(process)
    crashed(process)
    assert queued(f"{run_tag(first)}-s1"), "the elements should outlive their orchestrator"
    # 2. While the elements run: the second run adopted them.
    process = start(root, ran)
    _killed_while_running(root, process, first_line(process), first)
    # 3. Some elements finished and staged, and nobody committed them.
    process = start(root, ran)
    _killed_once_some_finished(root, process, first_line(process))
    # 4. In the middle of the commit of what they staged (by the run's recovery, when every
    # element had finished by then: it may die before it printed its id).
    crashed(start(root, ran, crash_at=COMMIT))
    # 5. The last step's element finished; its orchestrator never committed or finalized.
    process = start(root, ran)
    fifth = first_line(process)
    _killed_once_the_last_ended(root, process, fifth, "-s2-")

    resumed = _resume(root, ran, fifth)

    final = read_state(root, resumed)
    assert final.status is RunStatus.COMPLETED, final
    assert not any(step.failed for step in final.steps), final.steps
    assert tables(root) == clean_adoptable
    _assert_each_unit_ran_once(root, ran)
    assert not ledger(root, resumed), "the resumed run had nothing left to send or adopt"


def test_a_lazy_graph_killed_at_each_point_then_run_again_runs_every_leaf_once(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    root, ran = tmp_path / "store", tmp_path / "ran"

    def newest() -> str:
        states = sorted(list_states(root), key=lambda state: state.started_at)
        return states[-1].run_id if states else ""

    def started(before: str) -> str:
        wait_until(lambda: newest() not in ("", before), 60, "the run's state")
        return newest()

    # 1. Right after the leaves' first sbatch returned.
    process = start(root, ran, LAZY, crash_at="slurm.ledger:1")
    crashed(process)
    first = newest()
    assert queued(run_tag(first)), "the leaves should outlive their orchestrator"
    # 2. While the leaves run.
    process = start(root, ran, LAZY)
    second = started(first)
    _killed_while_running(root, process, second, first)
    # 3. Some leaves finished and staged, nobody committed them.
    process = start(root, ran, LAZY)
    _killed_once_some_finished(root, process, started(second))
    # 4. In the middle of the commit of what they staged (by its recovery, perhaps).
    crashed(start(root, ran, LAZY, crash_at=COMMIT))
    fourth = newest()
    # 5. The total's element finished; its orchestrator never committed or finalized.
    process = start(root, ran, LAZY)
    _killed_once_the_last_ended(root, process, started(fourth), "total")

    lines = finish(root, ran, LAZY)

    assert lines[-1] == str(sum(i * i for i in range(6)))
    _assert_each_unit_ran_once(root, ran)
    assert not ledger(root, newest()), "the last run had nothing left to send or adopt"
