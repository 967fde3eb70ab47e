"""`stemma watch` while a run changes: one line per event and its exit code, in a subprocess too."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunState, RunStatus, StepState, write_state
from stemma.core.runs.watch_lines import change_lines
from stemma.core.runs.watching import follow_lines

from .conftest import StateFactory

STEMMA = Path(sys.executable).parent / "stemma"


def test_follow_lines_prints_each_change_once_until_the_run_ends(
    root: Path, make_state: StateFactory
) -> None:
    first = make_state()
    transform = first.steps[1]
    later = [
        replace(first, steps=(first.steps[0], replace(transform, succeeded=3, running=1))),
        replace(
            first,
            status=RunStatus.COMPLETED,
            steps=(first.steps[0], replace(transform, status="completed", succeeded=4, running=0)),
        ),
    ]

    def next_write(_: float) -> None:  # the orchestrator's next write, instead of waiting for it
        write_state(root, later.pop(0))

    out = io.StringIO()
    code = follow_lines(root, first.run_id, out, sleep=next_write)
    assert code == ExitCode.OK
    lines = [line.split(" ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines[1:] == [
        "step 0 generate: completed 1/1 (succeeded 1, cached 0, failed 0, cancelled 0, running 0)",
        "step 1 transform: running 1/4 (succeeded 1, cached 0, failed 0, cancelled 0, running 2)",
        "step 1 transform: 3/4 (succeeded 3, cached 0, failed 0, cancelled 0, running 1)",
        "step 1 transform: completed 4/4 (succeeded 4, cached 0, failed 0, cancelled 0, running 0)",
        f"run {first.run_id} completed: 2 steps, 5/5 units, 0 failed, 0 cancelled",
    ]


def test_change_lines_report_cancel_levels_and_scheduler_job_states(
    make_state: StateFactory,
) -> None:
    before = make_state()
    step = StepState(
        number=1, name="transform", operation="t", status="running", jobs={"RUNNING": 2}
    )
    after: RunState = replace(before, cancel_level=1, steps=(before.steps[0], step))
    lines = change_lines(before, after)
    assert (
        lines[0] == "cancel level 1: graceful: no new work; running units finish and are committed"
    )
    assert "step 1 transform: jobs RUNNING=2" in lines


def test_watch_without_a_terminal_writes_plain_lines_in_a_subprocess(
    root: Path, make_state: StateFactory
) -> None:
    state = make_state(status=RunStatus.FAILED)
    done = subprocess.run(
        [str(STEMMA), "watch", state.run_id[:12]],
        capture_output=True,
        text=True,
        env={**os.environ, "STEMMA_ROOT": str(root)},
        check=False,
        timeout=60,
    )
    assert done.returncode == ExitCode.RUN_FAILED, done.stderr
    assert "\x1b[" not in done.stdout  # no terminal codes in a log
    assert done.stdout.splitlines()[-1].endswith(
        f"run {state.run_id} failed: 2 steps, 2/5 units, 0 failed, 0 cancelled"
    )
