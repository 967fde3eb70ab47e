"""The srun ledger of ``slurm-intra``, the steps a rerun may adopt from it, and their settling.

Pure logic on files under ``tmp_path``: squeue's answer is a fake (the step names it would
list), the runs' states are real state files. The steps adopted on the real cluster are in
``test_intra_adoption``.
"""

import os
import pathlib
import socket
import subprocess
import time
from concurrent.futures import Future
from typing import Any

import pytest
from submitit.core.utils import cloudpickle_dump, temporary_save_path

from stemma.core.backends.base import WorkerCrashedError
from stemma.core.live import RunState, RunStatus, write_state
from stemma.core.live.state import utc_now
from stemma.core.run_ids import new_run_id
from stemma.slurm.element import ElementFiles, run_element
from stemma.slurm.errors import ClusterUnavailableError
from stemma.slurm.intra_ledger import (
    STEPS_LEDGER,
    StepEntry,
    find_orphan_steps,
    read_steps,
)
from stemma.slurm.intra_watch import StepWatcher
from stemma.slurm.job_ledger import LEDGER_NAME, JobLedger, ledger_path, read_ledger

ALLOCATION = "4242"


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _run(root: pathlib.Path, *, alive: bool = False) -> str:
    """A run whose orchestrator is gone (stale), or alive (this process)."""
    run_id = new_run_id("intra")
    now = utc_now()
    state = RunState(
        run_id=run_id,
        name="intra",
        status=RunStatus.RUNNING,
        pid=os.getpid() if alive else _dead_pid(),
        host=socket.gethostname(),
        root=str(root),
        backend="slurm-intra",
        started_at=now,
        heartbeat=now,
    )
    write_state(root, state)
    return run_id


def _step(
    root: pathlib.Path,
    run_id: str,
    name: str,
    keys: tuple[str, ...],
    *,
    allocation: str = ALLOCATION,
    at: str = "2026-12-02T08:00:00+00:00",
    finished: bool = False,
) -> StepEntry:
    """A ledger line for step ``name`` of ``keys``; its result file written if ``finished``."""
    log_dir = root / "logs" / "slurm" / run_id
    log_dir.mkdir(parents=True, exist_ok=True)
    entry = StepEntry(
        allocation=allocation,
        step_name=f"stemma-{run_id[-8:]}-s1-op-{name}",
        step_number=1,
        result=str(log_dir / f"step-{name}.result.pkl"),
        log=str(log_dir / f"step-{name}.log"),
        submitted_at=at,
        keys=keys,
    )
    JobLedger().record(ledger_path(log_dir, run_id, STEPS_LEDGER), entry)
    if finished:
        pathlib.Path(entry.result).write_bytes(b"")
    return entry


def _found(
    root: pathlib.Path,
    wanted: set[str],
    listed: set[str] = frozenset(),  # pyright: ignore[reportArgumentType]
    **options: Any,
) -> dict[str, tuple[str, ...]]:
    asked: list[str] = []

    def squeue(allocation: str) -> set[str]:
        asked.append(allocation)
        return set(listed)

    steps = find_orphan_steps(
        root,
        wanted,
        run_id=options.pop("run_id", "intra_20261202_000000_ffffffff"),
        allocation=options.pop("allocation", ALLOCATION),
        listed=squeue,
        **options,
    )
    assert len(asked) <= 1  # one squeue call for every candidate
    return {step.job_id: step.keys for step in steps}


def test_a_step_line_is_appended_to_the_run_s_own_srun_ledger_never_to_its_job_ledger(
    tmp_path: pathlib.Path,
) -> None:
    run_id = _run(tmp_path)
    entry = _step(tmp_path, run_id, "aa", ("k1", "k2"))

    assert list(read_steps(tmp_path / "runs" / run_id / STEPS_LEDGER)) == [entry]
    assert list(read_ledger(tmp_path / "runs" / run_id / LEDGER_NAME)) == []  # reap sees none


def test_the_steps_of_this_allocation_alive_or_freshly_finished_with_wanted_keys_are_adoptable(
    tmp_path: pathlib.Path,
) -> None:
    dead = _run(tmp_path)
    running = _step(tmp_path, dead, "run", ("k1",))
    _step(tmp_path, dead, "done", ("k2",), finished=True)
    _step(tmp_path, dead, "gone", ("k3",))  # ended without a result while nobody watched
    _step(tmp_path, dead, "other", ("k4",), allocation="999")  # another allocation's
    _step(tmp_path, dead, "extra", ("k5", "unwanted"))  # computes a key not wanted
    listed = {running.step_name, f"stemma-{dead[-8:]}-s1-op-other"}

    found = _found(tmp_path, {"k1", "k2", "k3", "k4", "k5"}, listed)

    assert sorted(found.values()) == [("k1",), ("k2",)]


def test_a_step_that_finished_before_the_rerun_s_recovery_is_not_adopted(
    tmp_path: pathlib.Path,
) -> None:
    dead = _run(tmp_path)
    _step(tmp_path, dead, "done", ("k1",), finished=True)

    assert _found(tmp_path, {"k1"}, finished_since=time.time() + 60) == {}


def test_live_runs_own_steps_and_steps_already_adopted_give_nothing(
    tmp_path: pathlib.Path,
) -> None:
    live = _run(tmp_path, alive=True)
    first = _step(tmp_path, live, "live", ("k1",))
    dead = _run(tmp_path)
    second = _step(tmp_path, dead, "adopted", ("k2",))
    listed = {first.step_name, second.step_name}

    assert _found(tmp_path, {"k1", "k2"}, listed, own={second.step_name}) == {}
    # A resumed run's earlier life: its own ledger counts, for steps it did not start now.
    assert _found(tmp_path, {"k1"}, listed, run_id=live) == {first.step_name: ("k1",)}


def test_a_key_two_dead_runs_sent_is_waited_for_in_the_newest_step_only(
    tmp_path: pathlib.Path,
) -> None:
    older, newer = _run(tmp_path), _run(tmp_path)
    old = _step(tmp_path, older, "old", ("k1", "k2"), at="2026-12-02T08:00:00+00:00")
    new = _step(tmp_path, newer, "new", ("k2",), at="2026-12-02T09:00:00+00:00")
    # The run that adopted a step records it again: it is still one step.
    JobLedger().record(tmp_path / "runs" / _run(tmp_path) / STEPS_LEDGER, new)

    found = _found(tmp_path, {"k1", "k2"}, {old.step_name, new.step_name})

    assert found == {new.step_name: ("k2",)}


@pytest.mark.parametrize("text", [None, "", "not json\n", '{"allocation": "4242"}\n[1, 2]\n'])
def test_a_missing_or_garbled_srun_ledger_gives_nothing_to_adopt(
    tmp_path: pathlib.Path, text: str | None
) -> None:
    dead = _run(tmp_path)
    ledger = tmp_path / "runs" / dead / STEPS_LEDGER
    if text is not None:
        ledger.write_text(text)

    assert list(read_steps(ledger)) == []
    assert _found(tmp_path, {"k1"}, {"anything"}) == {}


def _files(tmp_path: pathlib.Path, name: str) -> ElementFiles:
    log = tmp_path / f"{name}.log"
    return ElementFiles(job_id=name, result=tmp_path / f"{name}.result.pkl", stdout=log, stderr=log)


def _fail(message: str) -> None:
    raise ValueError(message)


def _settled(future: Future[Any]) -> Any:
    return future.exception(timeout=30) or future.result()


def _write_result(path: pathlib.Path, value: object) -> None:
    """Write a result file as submitit does: whole, by a rename (a watcher never reads half)."""
    with temporary_save_path(path) as partial:
        cloudpickle_dump(value, partial)


def test_an_adopted_step_settles_from_its_result_or_as_crashed_once_squeue_lost_it(
    tmp_path: pathlib.Path,
) -> None:
    calls: list[int] = []

    def squeue() -> set[str]:
        calls.append(1)
        if len(calls) == 1:  # had the watcher taken no answer for an empty list, all would crash
            raise ClusterUnavailableError("squeue did not answer")
        return {"ok", "failing"}  # "dying" is gone

    watcher = StepWatcher(squeue, lambda: None, poll_seconds=0.05)
    ok, failing, dying = (_files(tmp_path, name) for name in ("ok", "failing", "dying"))
    futures = [watcher.watch(f.job_id, f) for f in (ok, failing, dying)]
    deadline = time.monotonic() + 30
    while len(calls) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    # Listed and without a result: still running, however many polls.
    assert not futures[0].done()
    assert not futures[1].done()

    _write_result(ok.result, run_element(lambda n: n * n, 7))
    _write_result(failing.result, run_element(_fail, "row 3 is corrupt"))
    watcher.join(timeout=30)

    assert _settled(futures[0]) == 49
    assert str(_settled(futures[1])) == "row 3 is corrupt"
    assert isinstance(_settled(futures[2]), WorkerCrashedError)
    assert "without a result" in str(_settled(futures[2]))
