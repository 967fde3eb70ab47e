"""A run whose orchestrator is gone reads stale on the dashboard: no step running, no ETA."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import cast

from textual.pilot import Pilot
from textual.widgets import Static

from stemma.core.live import write_state
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.screens import RunScreen
from stemma.tui.widgets.tables import table_at

from .conftest import drive, live_state, row_count, until


def _dead_pid() -> int:
    """The id of a process of this host that has exited (and been waited for)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(timeout=60)
    return process.pid


def test_a_run_whose_orchestrator_died_shows_its_running_step_stale_with_no_eta(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    state = replace(live_state(root), pid=_dead_pid())  # its heartbeat is fresh: only the pid
    write_state(root, state)
    view = DashboardClient(root).run(state.run_id)
    assert view.row.status.value == "stale"
    assert [(step.status, step.running) for step in view.steps] == [
        ("completed", 0),
        ("stale", 0),
    ]
    assert view.etas == {}

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        runs = table_at(app.screen, "#runs")
        await until(pilot, lambda: runs.row_count == 1, "the run")
        assert str(runs.get_row_at(0)[1]) == "stale"
        app.open_run(state.run_id)
        await until(pilot, lambda: row_count(app, "#steps") == 2, "the steps")
        screen = cast(RunScreen, app.screen)
        facts = screen.query_one("#run-facts", Static)
        await until(pilot, lambda: str(facts.render()).startswith("stale"), "the run stale")
        table = table_at(screen, "#steps")
        labels = [str(column.label) for column in table.columns.values()]
        row = dict(zip(labels, (str(cell) for cell in table.get_row_at(1)), strict=True))
        assert (row["status"], row["run"]) == ("stale", "0")
        assert not row["time"].startswith("~")  # no time left: it will never end by itself

    drive(root, scenario)
