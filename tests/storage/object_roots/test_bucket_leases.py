"""Runners on different machines sharing only a bucket build a step once (the bucket's lease).

Each runner is its own process with its own local half (``$STEMMA_STATE_DIR``), so no ``flock``
is shared: only the lease object in the bucket keeps them apart.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.core.lazy_functions import CALLS_ENV, calls
from tests.storage.object_roots.conftest import bucket_keys

RUNNER = "tests.storage.object_roots.lease_runner"
CHECKOUT = Path(__file__).resolve().parents[3]


def _start(root: str, tmp_path: Path, name: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", RUNNER, root],
        cwd=CHECKOUT,
        env={**os.environ, "STEMMA_STATE_DIR": str(tmp_path / f"machine {name}"), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.fixture(autouse=True)
def _calls_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


def test_four_runners_on_four_machines_build_a_step_once(bucket_root: str, tmp_path: Path) -> None:
    runners = [_start(bucket_root, tmp_path, str(n), STEMMA_TEST_SLEEP="1.5") for n in range(4)]
    outputs = [runner.communicate(timeout=240) for runner in runners]

    for runner, (out, err) in zip(runners, outputs, strict=True):
        assert runner.returncode == 0, err
        assert "value=49" in out
    assert calls()["slow_square"] == 1  # one built it; three waited and found it
    assert sum("cached=True" in out for out, _ in outputs) == 3
    assert not [k for k in bucket_keys(bucket_root) if k.startswith("leases/")]  # all given up


def test_a_runner_that_dies_loses_its_lease_at_its_expiry(s3_root: str, tmp_path: Path) -> None:
    short = {"STEMMA_LEASE_SECONDS": "3"}
    doomed = _start(s3_root, tmp_path, "doomed", STEMMA_TEST_SLEEP="120", **short)
    deadline = time.monotonic() + 60
    while not calls()["slow_square"]:  # it holds the lease and its step is running
        assert doomed.poll() is None, doomed.communicate()
        assert time.monotonic() < deadline, "the first runner never started its step"
        time.sleep(0.2)
    assert [k for k in bucket_keys(s3_root) if k.startswith("leases/")]
    os.killpg(doomed.pid, signal.SIGKILL)  # as a machine lost: nothing gives the lease up
    doomed.communicate()
    killed_at = time.monotonic()

    heir = _start(s3_root, tmp_path, "heir", STEMMA_TEST_SLEEP="0", **short)
    out, err = heir.communicate(timeout=120)

    assert heir.returncode == 0, err
    assert "value=49 cached=False" in out  # it took the lease over and built the step
    assert time.monotonic() - killed_at < 60  # at the expiry, not never
    assert calls()["slow_square"] == 2


def test_a_runner_killed_on_this_machine_is_followed_at_once_not_at_the_expiry(
    s3_root: str, tmp_path: Path
) -> None:
    doomed = _start(s3_root, tmp_path, "one", STEMMA_TEST_SLEEP="120")  # the default expiry
    deadline = time.monotonic() + 60
    while not calls()["slow_square"]:
        assert doomed.poll() is None, doomed.communicate()
        assert time.monotonic() < deadline, "the first runner never started its step"
        time.sleep(0.2)
    os.killpg(doomed.pid, signal.SIGKILL)
    doomed.communicate()
    killed_at = time.monotonic()

    again = _start(s3_root, tmp_path, "one", STEMMA_TEST_SLEEP="0")  # the same local half
    out, err = again.communicate(timeout=120)

    assert again.returncode == 0, err
    assert "value=49 cached=False" in out
    assert time.monotonic() - killed_at < 30  # well inside the lease's 60 s: no wait for it
