"""Which elements a rerun may adopt, read off the ledgers under a root (issue 20).

Ledgers and run states are written here as dead and live runs leave them; the job ids are not
in the scheduler, so an element counts as adoptable only through its result file (one that
finished after the rerun's recovery looked). squeue is still asked, once, of the real cluster.
"""

import dataclasses
import os
import pathlib
import socket
import subprocess
import time

import pytest

from stemma.core.backends.base import WaveRequest
from stemma.core.live import RunState, RunStatus, write_state
from stemma.core.live.state import utc_now
from stemma.core.run_ids import new_run_id
from stemma.slurm.adoption import find_orphans
from stemma.slurm.backend import SlurmBackend
from stemma.slurm.job_ledger import LEDGER_NAME, JobLedger, LedgerEntry

pytestmark = pytest.mark.slurm


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _run(root: pathlib.Path, status: RunStatus, pid: int) -> str:
    run_id = new_run_id("adopt")
    now = utc_now()
    write_state(
        root,
        RunState(
            run_id=run_id,
            name="adopt",
            status=status,
            pid=pid,
            host=socket.gethostname(),
            root=str(root),
            backend="slurm",
            started_at=now,
            heartbeat=now,
        ),
    )
    return run_id


def _submitted(
    root: pathlib.Path,
    run_id: str,
    job_id: str,
    keys: tuple[tuple[str, ...], ...],
    *,
    finished: tuple[int, ...] = (),
    at: str = "2026-12-02T08:00:00+00:00",
) -> None:
    """A ledger line for an array of ``keys``; the elements of ``finished`` left results."""
    log_dir = root / "logs" / "slurm" / run_id
    log_dir.mkdir(parents=True, exist_ok=True)
    entry = LedgerEntry(
        job_id=job_id,
        job_name=f"stemma-{run_id[-8:]}-s1-op",
        step_number=1,
        elements=len(keys),
        log_dir=str(log_dir),
        submitted_at=at,
        keys=keys,
    )
    JobLedger().record(root / "runs" / run_id / LEDGER_NAME, entry)
    for index in finished:
        element = job_id if len(keys) == 1 else f"{job_id}_{index}"
        (log_dir / f"{element}_0_result.pkl").write_bytes(b"")


def _found(root: pathlib.Path, wanted: set[str], **options: object) -> dict[str, tuple[str, ...]]:
    run_id = str(options.pop("run_id", "adopt_20261202_000000_ffffffff"))
    orphans = find_orphans(root, wanted, run_id=run_id, **options)  # pyright: ignore[reportArgumentType]
    return {orphan.job_id: orphan.keys for orphan in orphans}


def test_a_dead_run_s_finished_elements_of_wanted_keys_only_are_adoptable(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    dead = _run(tmp_path, RunStatus.RUNNING, _dead_pid())  # reads stale: its pid is gone
    _submitted(tmp_path, dead, "990001", (("a", "b"), ("c",), ("d", "x"), ("e",)), finished=(0, 2))
    # a_b: finished, every key wanted; c and e: ended without a result (died unwatched);
    # d_x: finished, but x is not wanted (the cache answered it): adopting it would commit x twice
    assert _found(tmp_path, {"a", "b", "c", "d", "e"}) == {"990001_0": ("a", "b")}


def test_live_settled_and_unreadable_runs_and_garbled_ledgers_give_nothing(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    alive = _run(tmp_path, RunStatus.RUNNING, os.getpid())
    _submitted(tmp_path, alive, "990002", (("a",),), finished=(0,))
    settled = _run(tmp_path, RunStatus.COMPLETED, _dead_pid())
    _submitted(tmp_path, settled, "990003", (("b",),), finished=(0,))
    garbled = _run(tmp_path, RunStatus.RUNNING, _dead_pid())
    (tmp_path / "runs" / garbled / LEDGER_NAME).write_text('{"job_id": "99\n\x00not json\n')
    no_state = tmp_path / "runs" / new_run_id("adopt")
    no_state.mkdir(parents=True)
    (no_state / LEDGER_NAME).write_text((tmp_path / "runs" / alive / LEDGER_NAME).read_text())
    assert _found(tmp_path, {"a", "b", "c"}) == {}
    assert _found(tmp_path / "no runs here", {"a"}) == {}


def test_a_key_two_dead_runs_sent_is_waited_for_in_the_newest_element_only(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    first = _run(tmp_path, RunStatus.RUNNING, _dead_pid())
    _submitted(tmp_path, first, "990004", (("a", "b"),), finished=(0,))
    second = _run(tmp_path, RunStatus.RUNNING, _dead_pid())
    _submitted(
        tmp_path, second, "990005", (("b",), ("c",)), finished=(0, 1), at="2026-12-02T09:00:00"
    )
    # b's newest element is 990005_0; 990004 would commit b a second time, so a is sent again
    assert _found(tmp_path, {"a", "b", "c"}) == {"990005_0": ("b",), "990005_1": ("c",)}


def test_a_resumed_run_adopts_its_earlier_life_s_elements_not_its_own(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    resumed = _run(tmp_path, RunStatus.RUNNING, os.getpid())  # alive: it is the one asking
    _submitted(tmp_path, resumed, "990006", (("a",),), finished=(0,))  # its earlier life's
    _submitted(tmp_path, resumed, "990007", (("b",),), finished=(0,))  # sent by this life
    found = _found(tmp_path, {"a", "b"}, run_id=resumed, own={"990007"})
    assert found == {"990006": ("a",)}


def test_an_element_that_finished_before_the_rerun_s_recovery_is_not_adopted(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    # What it staged was committed by that recovery: a failed unit of it must run again, not be
    # "adopted" with its old failure at every rerun while the dead run stays stale.
    dead = _run(tmp_path, RunStatus.RUNNING, _dead_pid())
    _submitted(tmp_path, dead, "990008", (("a",), ("b",)), finished=(0, 1))
    result = tmp_path / "logs" / "slurm" / dead / "990008_0_0_result.pkl"
    os.utime(result, (time.time() - 60, time.time() - 60))
    found = _found(tmp_path, {"a", "b"}, finished_since=time.time() - 5)
    assert found == {"990008_1": ("b",)}


def test_an_element_this_run_adopted_already_is_not_offered_again(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    dead = _run(tmp_path, RunStatus.RUNNING, _dead_pid())
    _submitted(tmp_path, dead, "990009", (("a",), ("b",)), finished=(0, 1))
    assert _found(tmp_path, {"a", "b"}, own={"990009_0"}) == {"990009_1": ("b",)}


def test_an_element_that_finished_between_the_rerun_s_recovery_and_its_backend_opening_is_adopted(
    tmp_path: pathlib.Path, slurm_cluster: None
) -> None:
    # The window CI met: the rerun's recovery ran, then the dead run's element staged its bundle
    # and finished, then the rerun opened its backend. Counted from the backend's opening, the
    # element was not adopted, its keys were sent again and its bundle stayed in staging.
    dead = _run(tmp_path, RunStatus.RUNNING, _dead_pid())
    recovered_at = time.time() - 30  # the rerun's recovery began
    _submitted(tmp_path, dead, "990010", (("a",),), finished=(0,))
    result = tmp_path / "logs" / "slurm" / dead / "990010_0_result.pkl"
    finished_at = recovered_at + 10  # after the recovery, before the backend opened
    os.utime(result, (finished_at, finished_at))
    rerun = "adopt_20261203_000000_eeeeeeee"
    request = WaveRequest(
        job_name="stemma-eeeeeeee-s1-op",
        run_id=rerun,
        run_tag="stemma-eeeeeeee",
        step_number=1,
        max_parallel=1,
        log_dir=str(tmp_path / "logs" / "slurm" / rerun),
        recovered_at=recovered_at,
    )
    backend = SlurmBackend(max_workers=1, default_root=tmp_path)
    try:
        adopted = backend.adopt({"a"}, request)
        assert [(element.job_id, element.keys) for element in adopted] == [("990010", ("a",))]
        # a wave that does not say when its run recovered counts from the backend's opening
        unsaid = dataclasses.replace(request, recovered_at=0.0, run_id="adopt_x_0")
        assert SlurmBackend(max_workers=1, default_root=tmp_path).adopt({"a"}, unsaid) == []
    finally:
        backend.shutdown(cancel_pending=True)
