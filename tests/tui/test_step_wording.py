"""The step screen's words: counts that agree, a header without repeats, outputs by name."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Log, Static

from stemma.tui.app import StemmaApp
from stemma.tui.screens import ArtifactScreen, RunsScreen, StepScreen
from stemma.tui.widgets.filter_box import FilterBox
from stemma.tui.widgets.step_log import WAITING
from stemma.tui.widgets.tables import table_at

from .conftest import FilledStore, drive, live_state, until


def _facts(app: StemmaApp) -> str:
    return str(app.screen.query_one("#step-facts", Static).render())


def _outputs(app: StemmaApp) -> list[str]:
    table = table_at(app.screen, "#outputs-table")
    return [str(table.get_row_at(index)[1]) for index in range(table.row_count)]


def test_a_step_of_one_execution_says_execution_once_and_its_name_once(
    filled: FilledStore,
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(filled.run_id, 0)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await pilot.pause()
        await until(pilot, lambda: "completed" in _facts(app), "the step's facts")
        assert _facts(app) == "example.generate · completed · 1 execution, 0 failed"

    drive(filled.root, scenario)


def test_the_outputs_tab_shows_short_ids_with_file_names_filters_on_names_and_opens_one(
    filled: FilledStore,
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(filled.run_id, 0)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await pilot.pause()
        await until(pilot, lambda: len(_outputs(app)) == 3, "the outputs")
        screen = app.screen
        assert isinstance(screen, StepScreen)
        names = sorted(shown.split(" ", 1)[1] for shown in _outputs(app))
        assert names == ["dataset_0.csv", "dataset_1.csv", "dataset_2.csv"]
        assert all(len(shown.split(" ")[0]) == 8 for shown in _outputs(app))
        await pilot.press("o", "slash", *"dataset_1")
        await until(pilot, lambda: len(_outputs(app)) == 1, "the filtered outputs")
        [kept] = screen.output_ids
        assert _outputs(app) == [f"{kept[:8]} dataset_1.csv"]
        screen.query_one(FilterBox).action_close()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ArtifactScreen), "the artifact")
        assert isinstance(app.screen, ArtifactScreen)
        assert app.screen.artifact_id == kept

    drive(filled.root, scenario, (80, 24))


def test_following_a_step_with_no_output_yet_says_it_waits_for_the_logs(tmp_path: Path) -> None:
    state = live_state(tmp_path)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(state.run_id, 1)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await pilot.press("f")
        log = app.screen.query_one("#log-view", Log)
        await until(pilot, lambda: WAITING in log.lines, "the waiting line")
        await pilot.pause(1.0)  # two polls: no log file, so the line stays
        assert list(log.lines)[-1] == WAITING

    drive(tmp_path, scenario)


def test_the_runs_summary_says_run_for_one_run(filled: FilledStore) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        summary = app.screen.query_one("#summary", Static)
        await until(pilot, lambda: "reading" not in str(summary.render()), "every run read")
        assert isinstance(app.screen, RunsScreen)
        assert str(summary.render()).startswith("1 of 1 run · 0 running")

    drive(filled.root, scenario)
