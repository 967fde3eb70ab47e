"""A step found built by the cache's side paths records the type given to ``apply`` as a build.

A function step's final event names ``output_type`` (``apply(..., type=)``) when it was built
here. Two other paths write that event: a step another runner built while this one waited for
its lease (a step-level hit found after planning), and a step whose unit a dead run left
committed without its event (``recovered``). Each must name the type too.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest

from stemma.core import OUT, Artifact, apply, resolve
from stemma.core.crash_points import AT_ENV, LOG_ENV
from stemma.core.live import list_states
from stemma.core.records import StepStatus
from stemma.core.store import open_run_store
from tests.core.lazy_functions import CALLS_ENV, calls, write_json

REPO = pathlib.Path(__file__).resolve().parents[3]
DEADLINE_SECONDS = 60.0
CRASHED_RUN = """
import sys
from stemma.core import OUT, apply, resolve
from stemma.core.store import open_run_store
from tests.core.lazy_functions import write_json

step = apply("typed/crashed", write_json, version="v0", type="json", data=[1], out_path=OUT)
resolve(step, store=open_run_store(sys.argv[1]))
"""


@pytest.fixture(autouse=True)
def _calls_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_step_built_by_another_runner_while_this_one_waited_records_its_type(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "root"
    building, release = threading.Event(), threading.Event()

    def build(out_path: str) -> int:
        building.set()
        assert release.wait(DEADLINE_SECONDS)
        pathlib.Path(out_path).write_text("[1]")
        return 1

    step = apply("typed/waited", build, version="v0", type="json", out_path=OUT)
    found: dict[str, Artifact] = {}
    errors: list[BaseException] = []

    def runner(name: str) -> None:
        try:
            store = open_run_store(root)
            found[name] = resolve(step, store=store, backend="local-thread", name=name)
        except BaseException as err:  # surfaced below
            errors.append(err)

    builder = threading.Thread(target=runner, args=("builder",))
    builder.start()
    assert building.wait(DEADLINE_SECONDS)
    waiter = threading.Thread(target=runner, args=("waiter",))
    waiter.start()
    # Its state file lists the step once its plan found it unbuilt: it will wait for the lease.
    _until(
        lambda: any(
            state.name == "waiter" and any(s.name == "typed/waited" for s in state.steps)
            for state in list_states(root)
        ),
        "the waiter to plan the step",
    )
    release.set()
    builder.join(DEADLINE_SECONDS)
    waiter.join(DEADLINE_SECONDS)
    assert errors == []
    artifact = found["waiter"]
    assert (artifact.cached, artifact.type) == (True, "json")
    final = open_run_store(root).latest_step(artifact.fingerprint, {StepStatus.COMPLETED})
    assert final is not None
    assert final.metadata["cache"] == "step"  # the waiter's event, not the builder's
    assert final.metadata["output_type"] == "json"


def test_a_step_a_dead_run_left_committed_without_its_event_records_its_type(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "root"
    env = {k: v for k, v in os.environ.items() if k not in (AT_ENV, LOG_ENV)}
    env.update(
        {
            AT_ENV: "staging.sentinel:1",  # its unit staged, its final event never written
            LOG_ENV: str(tmp_path / "points.log"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        }
    )
    crashed = subprocess.run(
        [sys.executable, "-c", CRASHED_RUN, str(root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        start_new_session=True,  # the crash kills the run's process group, never the test's
    )
    assert crashed.returncode != 0, crashed.stderr
    assert calls()["write_json"] == 1

    step = apply("typed/crashed", write_json, version="v0", type="json", data=[1], out_path=OUT)
    artifact = resolve(step, store=open_run_store(root))
    assert calls()["write_json"] == 1  # committed by this start's recovery, not run again
    assert artifact.type == "json"
    final = open_run_store(root).latest_step(artifact.fingerprint, {StepStatus.COMPLETED})
    assert final is not None
    assert final.metadata["recovered"] is True
    assert final.metadata["output_type"] == "json"
