import os
import pathlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stemma.core.backends import LocalBackend, WorkerCrashedError, open_backend
from stemma.core.backends.worker_deaths import guilty_pids
from stemma.core.cancel_levels import CANCEL_GRACE_ENV, CancelLevel
from stemma.core.errors import BackendUnavailableError, StoreUnavailableError
from tests.core import backend_tasks
from tests.core.worker_children import spawned_workers


@pytest.fixture
def backend() -> Iterator[LocalBackend]:
    local = LocalBackend(max_workers=2)
    yield local
    local.terminate()


def test_local_backend_returns_results_from_worker_processes(backend: LocalBackend) -> None:
    futures = [backend.submit(backend_tasks.square, n) for n in range(5)]
    assert [f.result(timeout=60) for f in futures] == [0, 1, 4, 9, 16]


def test_local_backend_unit_exception_reaches_the_future(backend: LocalBackend) -> None:
    future = backend.submit(backend_tasks.fail, "row 7 is corrupt")
    with pytest.raises(ValueError, match="row 7 is corrupt"):
        future.result(timeout=60)


def test_local_backend_workers_ignore_sigint(backend: LocalBackend) -> None:
    assert backend.submit(backend_tasks.sigint_disposition, None).result(timeout=60) is True


def test_local_backend_killed_worker_becomes_a_crash_error_and_pool_recovers(
    backend: LocalBackend,
) -> None:
    with pytest.raises(WorkerCrashedError, match="killed by SIGKILL") as info:
        backend.submit(backend_tasks.die, None).result(timeout=60)
    assert -signal.SIGKILL in info.value.exit_codes
    assert backend.submit(backend_tasks.square, 3).result(timeout=60) == 9


def test_a_worker_killed_at_once_is_reported_with_its_reaped_peak_and_the_hosts_memory(
    backend: LocalBackend,
) -> None:
    # Nobody samples /proc here (no sample_memory): the peak is the kernel's, from the reap.
    with pytest.raises(WorkerCrashedError, match="killed by SIGKILL, likely for memory") as info:
        backend.submit(backend_tasks.hold_and_die, 200).result(timeout=60)
    memory = info.value.memory
    assert memory is not None
    assert (memory["peak_rss_bytes"] or 0) >= 200 << 20
    assert (info.value.peak_rss_mb or 0) >= 200
    assert memory["system_total_bytes"]
    assert memory["system_available_bytes"]


def test_a_worker_that_exits_with_a_code_is_not_judged_killed_for_memory(
    backend: LocalBackend,
) -> None:
    with pytest.raises(WorkerCrashedError, match="exit code 3") as info:
        backend.submit(os._exit, 3).result(timeout=60)
    assert info.value.memory is None
    assert "likely for memory" not in str(info.value)


def _started_worker(backend: LocalBackend, task: Callable[[str], None], marker: Path) -> int:
    """Submit ``task`` and return its worker's pid once it runs."""
    backend.submit(task, str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists() or not marker.read_text():
        assert time.monotonic() < deadline, "worker never started"
        time.sleep(0.01)
    return int(marker.read_text())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_local_backend_terminate_leaves_no_worker_behind(
    backend: LocalBackend, tmp_path: pathlib.Path
) -> None:
    pid = _started_worker(backend, backend_tasks.sleep_and_report, tmp_path / "pid")
    backend.terminate()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_force_cancel_gives_a_stubborn_worker_its_grace_and_a_hard_cancel_ends_it(
    tmp_path: pathlib.Path,
) -> None:
    local = LocalBackend(max_workers=1, cancel_grace_seconds=60)
    try:
        pid = _started_worker(local, backend_tasks.ignore_sigterm_and_report, tmp_path / "pid")
        force = threading.Thread(target=local.cancel, args=(CancelLevel.FORCE,), daemon=True)
        force.start()
        time.sleep(3)  # past the 2 s default grace: the worker ignores SIGTERM and still runs
        assert _alive(pid)
        local.cancel(CancelLevel.HARD)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        local.terminate(grace_seconds=0)


def test_the_cancel_grace_comes_from_the_argument_else_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CANCEL_GRACE_ENV, raising=False)
    assert LocalBackend().cancel_grace_seconds == 2.0
    monkeypatch.setenv(CANCEL_GRACE_ENV, "45")
    assert LocalBackend().cancel_grace_seconds == 45.0
    assert LocalBackend(cancel_grace_seconds=0).cancel_grace_seconds == 0.0
    monkeypatch.setenv(CANCEL_GRACE_ENV, "a minute")
    with pytest.raises(ValueError, match=r"\$STEMMA_CANCEL_GRACE_SECONDS must be a number"):
        LocalBackend()
    with pytest.raises(ValueError, match="cancel_grace_seconds must be"):
        LocalBackend(cancel_grace_seconds=-1)


def test_local_backend_refuses_fork() -> None:
    with pytest.raises(ValueError, match="fork is unsafe"):
        LocalBackend(start_method="fork")


def test_open_backend_unknown_name_says_what_to_install() -> None:
    assert isinstance(open_backend("local", max_workers=1), LocalBackend)
    with pytest.raises(BackendUnavailableError, match="pip install stemma-slurm") as raised:
        open_backend("slurm-on-the-moon")
    assert not isinstance(raised.value, StoreUnavailableError)  # a backend's, not a store's
    assert isinstance(raised.value, ImportError)  # what `except ImportError` caught before


def test_local_backend_a_dying_worker_does_not_take_its_neighbours_down(
    backend: LocalBackend,
) -> None:
    neighbours = [backend.submit(backend_tasks.slow_square, n) for n in (3, 4)]
    doomed = backend.submit(backend_tasks.die_later, None)
    more = [backend.submit(backend_tasks.slow_square, n) for n in (5, 6)]
    with pytest.raises(WorkerCrashedError, match="killed by SIGKILL"):
        doomed.result(timeout=120)
    assert [f.result(timeout=120) for f in [*neighbours, *more]] == [9, 16, 25, 36]


def test_guilty_pids_blames_the_worker_that_died_of_something_else_than_the_pools_sigterm() -> None:
    assert guilty_pids({10: -signal.SIGKILL, 11: -signal.SIGTERM}) == {10}
    assert guilty_pids({10: 3, 11: -signal.SIGTERM, 12: 0}) == {10}
    assert guilty_pids({10: -signal.SIGTERM, 11: -signal.SIGTERM}) == {10, 11}  # can't tell


def test_local_backend_forkserver_workers_run_units() -> None:
    local = LocalBackend(max_workers=1, start_method="forkserver")
    try:
        assert local.submit(backend_tasks.square, 7).result(timeout=120) == 49
    finally:
        local.terminate()


def test_start_early_starts_one_worker_and_the_first_submit_starts_the_others() -> None:
    before = spawned_workers()
    local = LocalBackend(max_workers=2, warm=False)
    try:
        local.start_early()
        early = spawned_workers() - before
        assert len(early) == 1
        assert local.submit(backend_tasks.square, 4).result(timeout=60) == 16
        workers = spawned_workers() - before
        assert len(workers) == 2
        assert early <= workers  # the early worker is one of the pool's, not a spare
        local.start_early(workers=5)  # never more than max_workers
        assert spawned_workers() - before == workers
    finally:
        local.terminate()
    assert not spawned_workers() - before


def test_a_backend_started_early_and_shut_down_unused_leaves_no_worker() -> None:
    before = spawned_workers()
    local = LocalBackend(max_workers=2)
    local.start_early()
    assert len(spawned_workers() - before) == 1
    local.shutdown()  # nothing was sent: the warming worker is stopped, not waited for
    assert not spawned_workers() - before
    local.terminate()
    local.start_early()  # a terminated backend starts nothing again
    assert not spawned_workers() - before
