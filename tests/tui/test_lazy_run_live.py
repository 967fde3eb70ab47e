"""The dashboard beside a real lazy run in another process: its step tree, then `c` stops it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from stemma.core.live import RunStatus, list_states, read_state
from stemma.tui.app import StemmaApp
from stemma.tui.screens import RunScreen
from stemma.tui.widgets.tables import table_at

from .conftest import drive, until

SCRIPT = Path(__file__).with_name("slow_lazy.py")


@pytest.fixture
def lazy_run(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    root = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parent)}  # workers import its functions
    process = subprocess.Popen([sys.executable, str(SCRIPT), str(root)], env=env)
    try:
        yield root, process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=60)


def test_a_lazy_run_shows_its_steps_live_and_one_press_of_c_cancels_it(
    lazy_run: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    root, process = lazy_run

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        runs = table_at(app.screen, "#runs")
        await until(pilot, lambda: runs.row_count == 1, "the lazy run", seconds=90)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
        steps = table_at(app.screen, "#steps")

        def one_running() -> bool:
            rows = [[str(c) for c in steps.get_row_at(i)] for i in range(steps.row_count)]
            return steps.row_count == 7 and any(row[2] == "running" for row in rows)

        await until(pilot, one_running, "the lazy steps, one running", seconds=90)
        await pilot.press("c")
        await until(pilot, lambda: process.poll() is not None, "the run to stop", seconds=90)

    drive(root, scenario)
    assert process.returncode != 0  # run() raised RunCancelledError: the script has no result
    [state] = list_states(root)
    final = read_state(root, state.run_id)
    assert final.status is RunStatus.CANCELLED
    assert final.run_id.startswith("lazy_")
    finished = [step for step in final.steps if step.status == "completed"]
    assert 0 < len(finished) < 7
