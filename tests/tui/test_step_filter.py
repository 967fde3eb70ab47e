"""The step screen's executions filter: ``/`` (text, regex, ``!``), ``x`` failed, ``r`` running."""

from __future__ import annotations

from typing import Literal

from textual.pilot import Pilot

from stemma.tui.app import StemmaApp
from stemma.tui.client import ExecutionRow, StepView
from stemma.tui.row_filter import RowFilter
from stemma.tui.screens import StepScreen
from stemma.tui.widgets.execution_columns import executions_summary, shown_executions

from .conftest import FilledStore, drive, row_count, until

Stage = Literal["running", "staged", "committed"]
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


def _row(execution: str, success: bool | None, stage: Stage) -> ExecutionRow:
    return ExecutionRow(
        execution_run_id=execution,
        success=success,
        started_at="10:00:00",
        duration_s=1.0,
        worker="node-a:1",
        error="" if success is not False else "ValueError: bad part_3.csv",
        failure_log=None,
        worker_log="",
        stage=stage,
    )


def test_rows_show_running_first_then_failures_and_the_filter_matches_ids_not_shown() -> None:
    rows = [
        _row("aaaa1111", True, "committed"),
        _row("bbbb2222", False, "staged"),
        _row("cccc3333", None, "running"),
        _row("dddd4444", True, "staged"),
    ]
    every = shown_executions(rows, failures_only=False, running_only=False, row_filter=RowFilter())
    assert [e.execution_run_id for e in every] == ["cccc3333", "bbbb2222", "aaaa1111", "dddd4444"]
    by_id = RowFilter.parse("dddd4444")  # the id is not a column, but it is matched
    assert shown_executions(rows, failures_only=False, running_only=False, row_filter=by_id) == [
        rows[3]
    ]
    staged = RowFilter.parse("!staged")
    kept = shown_executions(rows, failures_only=False, running_only=False, row_filter=staged)
    assert {e.stage for e in kept} == {"running", "committed"}
    view = StepView(
        run_id="r",
        number=1,
        name="copy",
        operation="op",
        status="running",
        params={},
        executions=tuple(rows),
        outputs={},
    )
    narrowed = executions_summary(
        view, 1, failures_only=True, running_only=False, row_filter=RowFilter.parse("part_3")
    )
    assert narrowed == (
        "copy (op) · running · 1 of 4 executions (1 running, 2 staged) · failed only"
        " · filter: part_3 · 1 failed"
    )


def test_slash_on_the_outputs_tab_filters_the_outputs_and_enter_opens_the_kept_one(
    filled: FilledStore,
) -> None:
    from stemma.tui.client import DashboardClient
    from stemma.tui.screens import ArtifactScreen

    outputs = DashboardClient(filled.root).step(filled.run_id, 0).outputs["datasets"]
    wanted = sorted(outputs)[1]

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(filled.run_id, 0)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await pilot.press("o")
        await until(pilot, lambda: row_count(app, "#outputs-table") == 3, "three outputs")
        await pilot.press("slash")
        await pilot.pause()  # the box has the keys (hex digits are tab keys on the screen)
        await pilot.press(*wanted[:10])
        await until(pilot, lambda: row_count(app, "#outputs-table") == 1, "the one kept")
        assert _rows(app) == 0  # the same filter narrows the executions
        await pilot.press("enter", "enter")
        await until(pilot, lambda: isinstance(app.screen, ArtifactScreen), "the artifact")
        screen = app.screen
        assert isinstance(screen, ArtifactScreen)
        assert screen.artifact_id == wanted

    drive(filled.root, scenario)
