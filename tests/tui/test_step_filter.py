"""The step screen's executions filter: ``/`` (text, regex, ``!``), ``x`` failed, ``r`` running."""

from __future__ import annotations

from textual.pilot import Pilot

from stemma.tui.app import StemmaApp
from stemma.tui.screens import StepScreen

from .conftest import FilledStore, drive, row_count, until

FAIL_STEP = 3
"""The filled store's step failing on one of its three datasets."""


def _facts(app: StemmaApp) -> str:
    return str(app.screen.query_one("#step-facts").render())


def _rows(app: StemmaApp) -> int:
    return row_count(app, "#executions-table")


def test_slash_filters_the_executions_and_the_summary_says_how_many_of_all(
    filled: FilledStore,
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(filled.run_id, FAIL_STEP)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await until(pilot, lambda: _rows(app) == 3, "its three executions")
        await pilot.press("slash", *"failed")
        await until(pilot, lambda: _rows(app) == 1, "the failed one alone")
        assert "1 of 3 executions · filter: failed" in _facts(app)
        await pilot.press("enter")  # keeps the filter; the table has the keys again
        assert app.screen.focused is app.screen.query_one("#executions-table")
        await pilot.press("slash", "home", "!")
        await until(pilot, lambda: _rows(app) == 2, "the inverted filter")
        assert "2 of 3 executions · filter: !failed" in _facts(app)
        await pilot.press("escape")  # clears the filter, stays on the step
        await until(pilot, lambda: _rows(app) == 3, "every execution again")
        assert "3 executions, 1 failed" in _facts(app)
        assert isinstance(app.screen, StepScreen)
        await pilot.press("x")
        await until(pilot, lambda: _rows(app) == 1, "failed only")
        assert "1 of 3 executions" in _facts(app)
        assert "failed only" in _facts(app)
        await pilot.press("r")  # running only: a finished step has none
        await until(pilot, lambda: _rows(app) == 0, "running only")
        assert "0 of 3 executions" in _facts(app)
        assert "running only" in _facts(app)
        await pilot.press("r")
        await until(pilot, lambda: _rows(app) == 3, "all again")
        await pilot.press("escape")  # nothing typed: back to the run
        await until(pilot, lambda: not isinstance(app.screen, StepScreen), "the screen before")

    drive(filled.root, scenario)
