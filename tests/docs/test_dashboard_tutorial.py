"""The dashboard tutorial's script, watched and cancelled from other processes as the page says.

The script runs in a subprocess of its own, ``stemma watch`` follows it from another, and
``stemma cancel`` (two presses: graceful, then force) stops it from a third: real processes
meeting only through the root's live channel. Every wait polls the run's state file.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

from stemma.core.live import RunState, RunStatus, read_state

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "watch_and_cancel.py"
CANCELLED_EXIT = 5  # stemma.core.cli.ExitCode.CANCELLED


def _stemma(root: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _wait_for_running_copies(root: pathlib.Path, run_id: str) -> RunState:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            state = read_state(root, run_id)
        except (FileNotFoundError, ValueError):
            state = None
        if state is not None and len(state.steps) >= 2 and state.steps[1].running > 0:
            return state
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never got to its slow copies")


def test_watch_and_cancel_example_is_cancelled_by_stemma_cancel(tmp_path: pathlib.Path) -> None:
    script = tmp_path / EXAMPLE.name
    script.write_bytes(EXAMPLE.read_bytes())
    root = tmp_path / ".stemma"
    env = {**os.environ, "STEMMA_ROOT": str(root)}
    pipeline = subprocess.Popen(
        [sys.executable, script.name, "60"],  # a minute per copy: it is cancelled long before
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watcher: subprocess.Popen[str] | None = None
    try:
        assert pipeline.stdout is not None
        first = pipeline.stdout.readline()
        assert first.startswith("run slow_"), first
        run_id = first.split()[1].rstrip(":")
        _wait_for_running_copies(root, run_id)
        watcher = subprocess.Popen(
            [sys.executable, "-m", "stemma.core.cli.main", "watch", "slow", "--plain"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

        graceful = _stemma(root, "cancel", run_id)
        assert graceful.returncode == 0, graceful.stderr
        assert f"asked run {run_id} to cancel" in graceful.stdout
        assert f"next: stemma cancel {run_id} --level 2" in graceful.stdout
        force = _stemma(root, "cancel", run_id, "--level", "2")
        assert force.returncode == 0, force.stderr

        out, err = pipeline.communicate(timeout=120)
        watched, _ = watcher.communicate(timeout=60)
    finally:
        for process in (pipeline, watcher):
            if process is not None and process.poll() is None:
                process.kill()
                process.communicate()

    assert pipeline.returncode == 1, f"{out}\n{err}"  # the example's exit when not successful
    assert "overall success: False" in out
    state = read_state(root, run_id)
    assert state.status is RunStatus.CANCELLED
    assert state.cancel_level == 2
    assert state.steps[1].status == "cancelled"
    assert state.steps[1].succeeded == 0  # a minute per copy: force stopped every one of them
    assert watcher is not None
    assert watcher.returncode == CANCELLED_EXIT, watched
    assert f"run {run_id} cancelled" in watched
    runs = _stemma(root, "runs", "--format", "json")
    assert [(r["run_id"], r["status"]) for r in json.loads(runs.stdout)] == [(run_id, "cancelled")]
