"""The dashboard beside a real pipeline in another process: live progress, then `c` stops it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from stemma.core.live import RunStatus, list_states, read_state
from stemma.tui.app import StemmaApp
from stemma.tui.screens import RunScreen
from stemma.tui.widgets.tables import table_at

from .conftest import drive, script_running, until

SCRIPT = Path(__file__).with_name("slow_pipeline.py")


@pytest.fixture
def slow_run(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    with script_running(SCRIPT, tmp_path / "store") as process:
        yield tmp_path / "store", process


def test_a_running_pipeline_shows_live_progress_and_one_press_of_c_cancels_it(
    slow_run: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    root, process = slow_run

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        runs = table_at(app.screen, "#runs")
        await until(pilot, lambda: runs.row_count == 1, "the pipeline's run", seconds=90)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
        steps = table_at(app.screen, "#steps")

        def copying() -> bool:
            if steps.row_count < 2:
                return False
            row = [str(cell) for cell in steps.get_row_at(1)]
            return row[2] == "running" and row[3] not in ("0/0", "12/12")  # status, done

        await until(pilot, copying, "the slow step running with units to go", seconds=90)
        await pilot.press("c")
        await until(pilot, lambda: process.poll() is not None, "the pipeline to stop", seconds=90)
        await until(
            pilot,
            lambda: str(table_at(app.screen, "#steps").get_row_at(1)[2]) == "cancelled",
            "the step shown cancelled",
        )

    drive(root, scenario)
    assert process.returncode == 0  # graceful: finished work committed, a clean exit
    [state] = list_states(root)
    final = read_state(root, state.run_id)
    assert final.status is RunStatus.CANCELLED
    copy = final.steps[1]
    assert copy.status == "cancelled"
    assert 0 < copy.succeeded < 12
