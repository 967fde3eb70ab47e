"""Runs → run → step → artifact and back, over a real store, at 80x24."""

from __future__ import annotations

from typing import cast

from textual.pilot import Pilot
from textual.widgets import DataTable, Log, Static, TabbedContent

from stemma.tui.app import StemmaApp
from stemma.tui.screens import ArtifactScreen, HelpScreen, RunScreen, RunsScreen, StepScreen

from .conftest import FilledStore, drive, until


def _table(app: StemmaApp, selector: str) -> DataTable[object]:
    return cast("DataTable[object]", app.screen.query_one(selector, DataTable))


def _cells(app: StemmaApp, selector: str) -> list[list[str]]:
    table = _table(app, selector)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def test_runs_list_shows_the_finished_run_with_its_status_and_steps(filled: FilledStore) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: _table(app, "#runs").row_count == 1, "the run")
        [row] = _cells(app, "#runs")
        assert row[1] == "failed"  # one unit of the last step failed
        assert row[2].startswith("first · ")  # its command line (pytest), after the pipeline

    drive(filled.root, scenario)


def test_enter_opens_the_run_with_a_row_and_a_progress_bar_per_step(filled: FilledStore) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: _table(app, "#runs").row_count == 1, "the run")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
        await until(pilot, lambda: _table(app, "#steps").row_count == 4, "four steps")
        rows = _cells(app, "#steps")
        assert [(r[1], r[4], r[6]) for r in rows] == [
            ("example.generate", "1/1", "0"),
            ("├ example.transform", "3/3", "0"),
            ("  └ example.metrics", "3/3", "0"),
            ("└ example.fail", "3/3", "1"),
        ]
        assert rows[1][3] == "█" * 8
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), "the runs again")

    drive(filled.root, scenario, size=(120, 40))  # wide enough for the progress bar


def test_a_failed_execution_shows_its_failure_log(filled: FilledStore) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(filled.run_id, 3)
        await pilot.pause()
        assert isinstance(app.screen, StepScreen)
        await until(pilot, lambda: _table(app, "#executions-table").row_count == 3, "executions")
        await pilot.press("x")
        assert [r[0] for r in _cells(app, "#executions-table")] == ["failed"]
        await pilot.press("enter")
        log = app.screen.query_one("#log-view", Log)
        await until(pilot, lambda: "refusing" in "\n".join(log.lines), "the failure log")
        assert app.screen.query_one(TabbedContent).active == "log"
        await pilot.press("p")
        params = str(app.screen.query_one("#params-view", Static).render())
        assert '"match": "_1"' in params
        await pilot.press("w")
        why = str(app.screen.query_one("#why-view", Static).render())
        assert "ran: new, no earlier completed attempt" in why

    drive(filled.root, scenario)


def test_an_output_opens_its_artifact_with_a_csv_preview_and_lineage_both_ways(
    filled: FilledStore,
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(filled.run_id, 1)
        await pilot.pause()
        await until(pilot, lambda: _table(app, "#outputs-table").row_count == 3, "outputs")
        await pilot.press("o")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ArtifactScreen), "the artifact")
        preview = _table(app, "#preview-table")
        await until(pilot, lambda: preview.row_count > 0, "the preview")
        assert [str(c.label) for c in preview.columns.values()] == ["x", "y"]
        assert _table(app, "#up").row_count == 1
        assert "…metrics" in [row[1] for row in _cells(app, "#down")]  # the metrics step read it
        transformed = cast(ArtifactScreen, app.screen).artifact_id
        await pilot.press("u")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, ArtifactScreen) and app.screen.artifact_id != transformed
            ),
            "the source artifact",
        )
        await until(pilot, lambda: _table(app, "#down").row_count >= 1, "its lineage")
        assert _table(app, "#up").row_count == 0  # generated: made from nothing

    drive(filled.root, scenario)


def test_question_mark_opens_and_closes_the_help(filled: FilledStore) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)

    drive(filled.root, scenario)
