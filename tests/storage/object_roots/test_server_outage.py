"""A store that stops answering mid-run: the run goes on or fails saying why; no row is lost.

The store is killed while a step runs and started again three seconds later. object_store
retries what it can (a refused connection); a request cut mid-way fails the commit under way,
and the run then fails naming the connection: its work stays staged, and the next run commits
it. Either way every step ends recorded once, and the step committed before is not run again.
A store that never comes back fails the run after object_store's retries (about 20 s), naming
the store; what was staged before it went away is committed by the next run, once it is back.

Against an Azurite of this test's own (it keeps its blobs on disk, so it can be killed and
started again with the bucket as it was), on a port of its own: the shared servers are left
alone.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from stemma.storage import executions
from tests.core.lazy_functions import CALLS_ENV, calls
from tests.storage.object_roots.conftest import (
    AZURITE_ACCOUNT,
    AZURITE_KEY,
    make_container,
    user_env,
)

CHECKOUT = Path(__file__).resolve().parents[3]
AZURITE = CHECKOUT / ".venvs" / "azurite" / "node_modules" / ".bin" / "azurite-blob"


class OwnAzurite:
    """An Azurite process on a free port, its blobs under ``location``; killed and restarted."""

    def __init__(self, location: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.location = location
        self.endpoint = f"http://127.0.0.1:{self.port}/{AZURITE_ACCOUNT}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        if not AZURITE.exists():
            pytest.fail(f"no Azurite at {AZURITE}: run `bash scripts/object-stores.sh start`")
        self.process = subprocess.Popen(
            [
                str(AZURITE),
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                str(self.port),
                "--location",
                str(self.location),
                "--skipApiVersionCheck",
                "--loose",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(self.endpoint, timeout=1)
            except urllib.error.HTTPError:
                return  # it answers (an error status is an answer)
            except OSError:
                assert time.monotonic() < deadline, "Azurite did not start"
                time.sleep(0.1)
                continue
            return

    def kill(self) -> None:
        """Stop it answering (SIGTERM: Azurite writes its blob index down as it goes)."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait()


@pytest.fixture
def azurite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OwnAzurite]:
    server = OwnAzurite(tmp_path / "azurite")
    server.start()
    user_env(
        monkeypatch,
        server.endpoint,
        AZURE_STORAGE_USE_EMULATOR="true",
        AZURITE_BLOB_STORAGE_URL=f"http://127.0.0.1:{server.port}",
        AZURE_STORAGE_ACCOUNT_NAME=AZURITE_ACCOUNT,
        AZURE_STORAGE_ACCOUNT_KEY=AZURITE_KEY,
    )
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))
    yield server
    if server.process is not None and server.process.poll() is None:
        server.kill()


def test_a_store_killed_mid_run_and_started_again_costs_retries_not_the_run(
    azurite: OwnAzurite,
) -> None:
    root = f"az://{make_container(azurite.endpoint)}/root"
    runner = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.object_roots.outage_runner", root],
        cwd=CHECKOUT,
        env={**os.environ, "STEMMA_TEST_SLEEP": "1.5"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while calls()["slow_square"] < 2:  # the first step done, the second running
        assert runner.poll() is None, runner.communicate()
        assert time.monotonic() < deadline, "the run never reached its second step"
        time.sleep(0.1)
    azurite.kill()  # mid-step: its commit, the next step's lease and reads meet a dead store
    time.sleep(3)
    azurite.start()
    out, err = runner.communicate(timeout=300)

    if runner.returncode != 0:  # the outage cut a request: said, and the work kept
        assert "StepFailedError" in err, err[-3000:]
        said = err.lower()  # the store named, or the connection that broke
        assert "cannot be reached in azure blob storage" in said or "connection" in said, err
        again = subprocess.run(
            [sys.executable, "-m", "tests.storage.object_roots.outage_runner", root],
            cwd=CHECKOUT,
            env={**os.environ, "STEMMA_TEST_SLEEP": "0"},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert again.returncode == 0, again.stderr[-3000:]
        out = again.stdout
    assert "values=1,4,9" in out
    done = executions(root).filter(pl.col("success"))
    assert done.height == 3  # each step recorded once: nothing lost, nothing twice
    assert done["execution_spec_id"].n_unique() == 3
    assert calls()["slow_square"] <= 4  # the step committed before the outage never ran again


def test_a_store_that_never_comes_back_fails_the_run_in_one_line_and_loses_nothing(
    azurite: OwnAzurite,
) -> None:
    root = f"az://{make_container(azurite.endpoint)}/root"
    runner = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.object_roots.outage_runner", root],
        cwd=CHECKOUT,
        env={**os.environ, "STEMMA_TEST_SLEEP": "1.5"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while calls()["slow_square"] < 2:
        assert runner.poll() is None, runner.communicate()
        assert time.monotonic() < deadline, "the run never reached its second step"
        time.sleep(0.1)
    azurite.kill()  # and never started again while the run lives
    out, err = runner.communicate(timeout=600)  # object_store's retries, then the failure

    assert runner.returncode != 0, out
    assert "values=" not in out
    said = err.lower()
    assert "cannot be reached in azure blob storage" in said or "connection" in said, err[-3000:]
    assert "Traceback" not in err.splitlines()[-1], err[-3000:]

    azurite.start()  # the store is back: the next run finds the first step, does the rest once
    again = subprocess.run(
        [sys.executable, "-m", "tests.storage.object_roots.outage_runner", root],
        cwd=CHECKOUT,
        env={**os.environ, "STEMMA_TEST_SLEEP": "0"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "values=1,4,9" in again.stdout
    done = executions(root).filter(pl.col("success"))
    assert done.height == 3
    assert done["execution_spec_id"].n_unique() == 3
    # slow/1 was staged before the store went away and is committed from staging, never run
    # again; slow/2 and slow/3 could not keep their outputs in the store, so they run again.
    assert calls()["slow_square"] <= 5
