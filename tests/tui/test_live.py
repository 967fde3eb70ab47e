"""The dashboard while runs change: new runs appear, counts move, three presses of c escalate."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import cast

from textual.pilot import Pilot
from textual.widgets import Input, Static

from stemma.core.live import RunStatus, list_states, pending_requests, write_state
from stemma.tui.app import StemmaApp
from stemma.tui.screens import LaunchScreen, RunScreen
from stemma.tui.widgets.cancel_bar import CancelBar
from stemma.tui.widgets.tables import table_at

from .conftest import drive, live_state, until


def _row(app: StemmaApp, selector: str, index: int) -> list[str]:
    return [str(cell) for cell in table_at(app.screen, selector).get_row_at(index)]


def test_a_run_that_starts_while_the_dashboard_is_open_appears_by_itself(tmp_path: Path) -> None:
    root = tmp_path / "store"

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        summary = app.screen.query_one("#summary", Static)
        await until(pilot, lambda: "0 of 0 runs" in str(summary.render()), "an empty list")
        live_state(root)
        runs = table_at(app.screen, "#runs")
        await until(pilot, lambda: runs.row_count == 1, "the new run")
        assert _row(app, "#runs", 0)[1:3] == ["running", "live"]

    drive(root, scenario)


def test_a_step_s_counts_update_live_while_the_run_screen_is_open(tmp_path: Path) -> None:
    root = tmp_path / "store"
    state = live_state(root)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run(state.run_id)
        await pilot.pause()
        steps = table_at(app.screen, "#steps")
        await until(pilot, lambda: steps.row_count == 2, "the steps")
        assert _row(app, "#steps", 1)[4] == "2/10"
        transform = replace(state.steps[1], succeeded=7, running=3)
        write_state(root, replace(state, steps=(state.steps[0], transform)))
        await until(pilot, lambda: _row(app, "#steps", 1)[4] == "7/10", "the new count")
        assert _row(app, "#steps", 1)[3] == "██████░░"  # 7 of 10 units on an 8-cell bar

    drive(root, scenario, size=(120, 40))  # wide enough for the progress bar


def test_three_presses_of_c_ask_graceful_force_hard_and_say_what_comes_next(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    state = live_state(root)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run(state.run_id)
        await pilot.pause()
        screen = cast(RunScreen, app.screen)
        await until(pilot, lambda: screen.view is not None, "the run")
        bar = screen.query_one(CancelBar)
        assert not bar.display
        expected = [
            "cancel 1/3 asked: graceful",
            "cancel 2/3 asked: force",
            "cancel 3/3 asked: hard",
        ]
        for presses, text in enumerate(expected, start=1):
            await pilot.press("c")
            await until(
                pilot, lambda n=presses: len(pending_requests(root, state.run_id)) == n, "a request"
            )
            assert str(bar.render()).startswith(text)
        assert "press c again for force" not in str(bar.render())
        assert "nothing stronger left" in str(bar.render())
        await pilot.press("c")  # a fourth press asks for nothing more
        await pilot.pause()
        assert [int(r.level) for r in pending_requests(root, state.run_id)] == [1, 2, 3]

    drive(root, scenario)


def test_the_bar_shows_a_level_applied_from_elsewhere_and_the_next_press_goes_above_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    state = live_state(root, cancel_level=1)  # Ctrl-C in the run's own terminal

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run(state.run_id)
        await pilot.pause()
        bar = app.screen.query_one(CancelBar)
        await until(pilot, lambda: bool(bar.display), "the cancel bar")
        assert "press c again for force" in str(bar.render())
        await pilot.press("c")
        await until(pilot, lambda: len(pending_requests(root, state.run_id)) == 1, "a request")
        assert [int(r.level) for r in pending_requests(root, state.run_id)] == [2]

    drive(root, scenario)


def test_c_on_a_finished_run_writes_no_request(tmp_path: Path) -> None:
    root = tmp_path / "store"
    state = live_state(root, status=RunStatus.COMPLETED)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        runs = table_at(app.screen, "#runs")
        await until(pilot, lambda: runs.row_count == 1, "the run")
        await pilot.press("c")
        await pilot.pause()
        assert pending_requests(root, state.run_id) == []

    drive(root, scenario)


def test_n_launches_a_script_detached_and_its_run_appears(tmp_path: Path) -> None:
    root = tmp_path / "store"
    script = Path(__file__).with_name("slow_pipeline.py")

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, LaunchScreen), "the launch prompt")
        app.screen.query_one("#script", Input).value = f"{script}:quick"
        await pilot.press("enter")
        runs = table_at(app.screen, "#runs")
        # A new interpreter imports stemma and starts a pool first: slow on a busy machine.
        await until(pilot, lambda: runs.row_count == 1, "the launched run", seconds=90)
        assert _row(app, "#runs", 0)[2].endswith("slow_pipeline.py:quick")

    drive(root, scenario)
    [state] = list_states(root)
    assert os.getsid(state.pid) == state.pid  # its own session: it outlives the dashboard
