import os
import pathlib
import signal
import sys
import time
from collections.abc import Iterator

import pytest

from stemma.core.backends import LocalBackend, WorkerCrashedError, open_backend
from stemma.core.errors import StoreUnavailableError

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
import backend_tasks


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


def test_local_backend_terminate_leaves_no_worker_behind(
    backend: LocalBackend, tmp_path: pathlib.Path
) -> None:
    marker = tmp_path / "pid"
    backend.submit(backend_tasks.sleep_and_report, str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists() or not marker.read_text():
        assert time.monotonic() < deadline, "worker never started"
        time.sleep(0.01)
    pid = int(marker.read_text())
    backend.terminate()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_local_backend_refuses_fork() -> None:
    with pytest.raises(ValueError, match="fork is unsafe"):
        LocalBackend(start_method="fork")


def test_open_backend_unknown_name_says_what_to_install() -> None:
    assert isinstance(open_backend("local", max_workers=1), LocalBackend)
    with pytest.raises(StoreUnavailableError, match="pip install stemma-slurm"):
        open_backend("slurm")
