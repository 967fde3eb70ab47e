"""Cancellation, for real: a pipeline in a subprocess, stopped by Ctrl-C presses or a request.

The subprocess runs ``cancellable_pipeline.py`` in its own session, so a press is a SIGINT to
its whole process group, as a terminal sends it (the workers ignore it; the orchestrator
decides). Each test waits on the run's live state file, never on a fixed sleep.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from stemma.core.cancel_levels import CANCEL_GRACE_ENV
from stemma.core.front.pipeline import Pipeline
from stemma.core.live import RunState, RunStatus, read_state, request_cancel
from stemma.core.store import open_run_store
from tests.integration.process_tree import alive, descendants
from tests.integration.run_waits import wait_for
from tests.integration.stubborn_markers import STUBBORN_MARKERS_ENV, every_worker_stubborn

SCRIPT = pathlib.Path(__file__).with_name("cancellable_pipeline.py")


def _start(
    root: pathlib.Path, seconds: float, *, stubborn: bool = False, grace: float | None = None
) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)
    if grace is not None:
        env[CANCEL_GRACE_ENV] = str(grace)
    if stubborn:
        env[STUBBORN_MARKERS_ENV] = str(_markers(root))
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(root), str(seconds), *(["stubborn"] if stubborn else [])],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    run_id = process.stdout.readline().strip()
    assert run_id, process.stderr.read() if process.stderr else "no run id"
    return process, run_id


def _wait_state(
    root: pathlib.Path, run_id: str, ready: Callable[[RunState], bool], timeout: float = 120
) -> RunState:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = read_state(root, run_id)
        except (FileNotFoundError, ValueError):
            state = None
        if state is not None and ready(state):
            return state
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached the awaited state")


def _markers(root: pathlib.Path) -> pathlib.Path:
    """Where stubborn units say they ignore SIGTERM (inside the test's own root folder)."""
    folder = root / "stubborn-started"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _slow_step_running(state: RunState) -> bool:
    return len(state.steps) >= 2 and state.steps[1].running > 0


def _press(process: subprocess.Popen[str], presses: int, gap: float = 0.3) -> None:
    for _ in range(presses):
        os.killpg(process.pid, signal.SIGINT)
        time.sleep(gap)  # presses are apart (signals sent together would merge into one)


def _events(root: pathlib.Path, run_id: str) -> dict[str, tuple[str, dict[str, object]]]:
    """The final event of each step of the run: status and metadata, by step name."""
    final: dict[str, tuple[str, dict[str, object]]] = {}
    for event in open_run_store(root).step_events(run_id):
        if event.status != "running":
            final[event.step_name] = (str(event.status), dict(event.metadata))
    return final


def test_one_press_lets_running_units_finish_and_exits_zero_with_a_summary(
    tmp_path: pathlib.Path,
) -> None:
    process, run_id = _start(tmp_path, seconds=2.0)
    _wait_state(tmp_path, run_id, _slow_step_running)
    _press(process, 1)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "graceful" in err
    assert "Press Ctrl-C again for force" in err
    assert "cancelled (graceful)" in err  # the summary line
    summary = json.loads(out.strip().splitlines()[-1])
    assert [row["status"] for row in summary["steps"]] == ["completed", "cancelled", "skipped"]
    events = _events(tmp_path, run_id)
    assert events["example.slow_copy"][0] == "cancelled"
    assert events["example.transform"] == ("skipped", events["example.transform"][1])
    assert events["example.transform"][1]["skip_reason"] == "cancelled"
    state = read_state(tmp_path, run_id)
    assert state.status is RunStatus.CANCELLED
    assert state.cancel_level == 1
    slow = state.steps[1]
    assert slow.succeeded >= 2  # the units running at the press finished and were committed
    assert slow.succeeded < 6


def test_rerun_after_cancel_redoes_only_the_cancelled_and_skipped_work(
    tmp_path: pathlib.Path,
) -> None:
    process, run_id = _start(tmp_path, seconds=1.5)
    _wait_state(tmp_path, run_id, _slow_step_running)
    _press(process, 1)
    process.communicate(timeout=120)
    finished = read_state(tmp_path, run_id).steps[1].succeeded

    rerun = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path), "1.5"],  # the same params: the same keys
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    rerun_id = rerun.stdout.splitlines()[0]
    events = _events(tmp_path, rerun_id)
    assert events["example.generate"][1].get("cache") == "step"  # not redone
    assert events["example.slow_copy"][0] == "completed"
    assert events["example.slow_copy"][1]["execution_cache_hits"] == finished
    assert events["example.transform"][0] == "completed"


@pytest.mark.parametrize("presses", [2, 3])
def test_force_and_hard_presses_leave_no_worker_behind(
    tmp_path: pathlib.Path, presses: int
) -> None:
    # For three presses the units ignore SIGTERM, as a stubborn tool does, and the force press's
    # grace is a minute: the third press, sent once the run says level 2, is what ends it (with
    # the default 2 s grace, a loaded machine could show level 2 only once the grace was over).
    stubborn = presses == 3
    process, run_id = _start(
        tmp_path, seconds=60.0, stubborn=stubborn, grace=60.0 if stubborn else None
    )
    _wait_state(tmp_path, run_id, _slow_step_running)
    if stubborn:  # a unit sent is not yet one that ignores SIGTERM: the force press would end it
        wait_for(lambda: every_worker_stubborn(_markers(tmp_path)), 60, "stubborn workers")
    workers = descendants(process.pid)
    assert workers, "the slow step's workers should be running"
    started = time.monotonic()
    for level in range(1, presses + 1):
        _press(process, 1, gap=0)
        if level < presses:  # each press seen before the next: signals close together merge
            _wait_state(tmp_path, run_id, lambda s, level=level: s.cancel_level >= level, 10)
    _, err = process.communicate(timeout=60)
    assert time.monotonic() - started < 30  # the 60 s units were not waited for
    deadline = time.monotonic() + 10
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(workers), f"orphaned workers: {alive(workers)}"
    state = read_state(tmp_path, run_id)
    assert state.cancel_level == presses
    assert state.status is RunStatus.CANCELLED
    if presses == 2:
        assert process.returncode == 0, err
        assert "force" in err
        assert "Press Ctrl-C again for hard" in err
        assert _events(tmp_path, run_id)["example.slow_copy"][0] == "cancelled"
    else:
        # The hard press raised KeyboardInterrupt: Python ends killed by SIGINT (a shell shows 130),
        # or exits 130 if it lingered (docs/concepts/cancellation.md).
        assert process.returncode in (-signal.SIGINT, 130), err
        assert "hard" in err
        Pipeline.create("after-hard", root=tmp_path).finalize()  # recovers what was staged


def test_a_cancel_request_from_another_process_is_noticed_within_a_second(
    tmp_path: pathlib.Path,
) -> None:
    process, run_id = _start(tmp_path, seconds=60.0)
    _wait_state(tmp_path, run_id, _slow_step_running)
    request_cancel(tmp_path, run_id, 2)
    noticed = _wait_state(tmp_path, run_id, lambda s: s.cancel_level == 2, timeout=5)
    assert noticed.cancel_level == 2
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert read_state(tmp_path, run_id).status is RunStatus.CANCELLED


def test_killed_orchestrator_takes_its_workers_with_it_and_shows_as_stale(
    tmp_path: pathlib.Path,
) -> None:
    process, run_id = _start(tmp_path, seconds=60.0)
    _wait_state(tmp_path, run_id, _slow_step_running)
    workers = descendants(process.pid)
    assert workers
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    deadline = time.monotonic() + 15
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(workers), f"orphaned workers: {alive(workers)}"
    assert read_state(tmp_path, run_id).status is RunStatus.STALE  # its pid is gone
    # The next start commits what was staged; the rerun finishes the job.
    rerun = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path), "0.1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    summary = json.loads(rerun.stdout.strip().splitlines()[-1])
    assert summary["overall_success"] is True
