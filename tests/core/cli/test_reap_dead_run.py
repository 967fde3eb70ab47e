"""An orchestrator killed with SIGKILL mid-step: stale everywhere, then `stemma reap` settles it.

Before the reap no view shows the dead run or its step as running; the reap commits the whole
results its workers staged, writes the run final and says what it did; afterwards the run
reads as settled, and its step's counts add up.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stemma.core.cli.main import main
from stemma.core.execution_records import StepEvent
from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunStatus, list_states, read_state, run_dir
from stemma.core.runs.run_lookup import history_events

UNITS = 20
SCRIPT = f"""
import sys

from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline



def main(root: str) -> None:
    pipeline = Pipeline.create("doomed", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={{"count": {UNITS}, "rows": 2}})
    pipeline.run(
        SlowCopy,
        inputs={{"dataset": generated.output("datasets")}},
        params={{"seconds": 0.5}},
        execution={{"units_per_worker": 1}},
    )
    pipeline.finalize()


if __name__ == "__main__":  # workers are spawned: they import this file
    main(sys.argv[1])
"""


def _killed_mid_step(tmp_path: Path, root: Path) -> str:
    """Start the pipeline in its own process, SIGKILL it once some units are done: its run id."""
    script = tmp_path / "doomed.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen([sys.executable, str(script), str(root)])
    try:
        deadline = time.monotonic() + 120
        while not _copying(root):
            assert process.poll() is None, "the pipeline ended before it could be killed"
            assert time.monotonic() < deadline, "the slow step never got going"
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=60)
    [state] = list_states(root)
    return state.run_id


def _copying(root: Path) -> bool:
    states = list_states(root)
    if not states or len(states[0].steps) < 2:
        return False
    copy = states[0].steps[1]
    return copy.status == "running" and copy.succeeded >= 3 and copy.running > 0


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == ExitCode.OK
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("state_file", [True, False], ids=["state-file", "history-only"])
def test_a_sigkilled_run_reads_stale_and_reap_settles_it_and_says_what_it_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], state_file: bool
) -> None:
    root = tmp_path / "store"
    run_id = _killed_mid_step(tmp_path, root)
    where = ("--root", str(root))
    if not state_file:  # removed, or written by a version before the live channel
        (run_dir(root, run_id) / "state.json").unlink()

    [row] = _json(capsys, "runs", *where)
    assert row["status"] == "stale"
    steps = _json(capsys, "status", run_id, *where)
    assert [step["status"] for step in steps] == ["completed", "stale"]
    assert all(step["running"] == 0 for step in steps)
    if state_file:
        assert main(["watch", run_id, "--plain", *where]) == ExitCode.RUN_STALE
        assert f"stemma reap {run_id}" in capsys.readouterr().out

    assert main(["reap", run_id, *where]) == ExitCode.OK
    said = capsys.readouterr().out
    committed = re.search(r"committed (\d+) staged results", said)
    assert committed is not None, said
    assert int(committed.group(1)) >= 3, said  # the units finished before the kill
    assert "local workers stop by themselves" in said
    assert f"run {run_id} settled as cancelled" in said
    assert "step 1 example.slow_copy: cancelled" in said
    assert "1 final step events written to the steps log" in said
    latest = {e.step_number: e for e in sorted(history_events(root, run_id), key=_when)}
    assert [event.status.value for event in latest.values()] == ["completed", "cancelled"]

    [row] = _json(capsys, "runs", *where)
    assert row["status"] == "cancelled"
    state = read_state(root, run_id)
    assert (state.status, state.reaped_at is not None) == (RunStatus.CANCELLED, True)
    copy = _json(capsys, "status", run_id, *where)[1]
    assert (copy["status"], copy["running"]) == ("cancelled", 0)
    if state_file:  # (history alone has no counts of a step that never ended)
        assert copy["total"] == UNITS
        assert int(str(copy["succeeded"])) >= 3
    assert copy["succeeded"] + copy["failed"] + copy["cancelled"] == copy["total"]  # pyright: ignore[reportOperatorIssue]

    # Settled once: a second reap has nothing left to settle, and says so.
    assert main(["reap", run_id, *where]) == ExitCode.OK
    assert f"run {run_id} was already settled (cancelled)" in capsys.readouterr().out


def test_a_hard_cancelled_run_shows_no_running_step_and_reap_closes_its_step_in_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "store"
    script = tmp_path / "doomed.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen([sys.executable, str(script), str(root)])
    try:
        deadline = time.monotonic() + 120
        while not _copying(root):
            assert process.poll() is None, "the pipeline ended before it could be cancelled"
            assert time.monotonic() < deadline, "the slow step never got going"
            time.sleep(0.05)
        [state] = list_states(root)
        assert main(["cancel", state.run_id, "--level", "3", "--root", str(root)]) == 0
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)
    where = ("--root", str(root))
    copy = _json(capsys, "status", state.run_id, *where)[1]
    assert (copy["status"], copy["running"]) == ("cancelled", 0)  # never running, no ETA
    assert copy["succeeded"] + copy["failed"] + copy["cancelled"] == UNITS  # pyright: ignore[reportOperatorIssue]
    [row] = _json(capsys, "runs", *where)
    assert row["status"] == "cancelled"

    # Whether the hard exit left the step's attempt open in the event log or not (its thread
    # may close it first), after the reap no step's newest event says running.
    assert main(["reap", state.run_id, *where]) == ExitCode.OK
    said = capsys.readouterr().out
    assert "committed" in said
    assert "settled as cancelled" in said or "already settled (cancelled)" in said
    latest = {e.step_number: e for e in sorted(history_events(root, state.run_id), key=_when)}
    assert [event.status.value for event in latest.values()] == ["completed", "cancelled"]


def _when(event: StepEvent) -> dt.datetime:
    return event.timestamp
