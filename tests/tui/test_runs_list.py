"""The runs list's keys: search (a box made on the first ``/``), status filter, sort; the footer
of keys arrives right after the first frame; a running run's ticking time repaints its row alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import Footer, Input, Static

from stemma.core.live import RunStatus
from stemma.tui.app import StemmaApp
from stemma.tui.screens import RunsScreen
from stemma.tui.widgets.tables import table_at

from .conftest import drive, live_state, record_painted, until

RUN_IDS = (
    "alpha_20261129_100000_000000a1",
    "beta_20261129_110000_000000b2",
    "gamma_20261129_120000_000000c3",
)


def _shown(app: StemmaApp) -> list[str]:
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return list(screen.shown)


def _store(root: Path) -> None:
    live_state(root, RUN_IDS[0], status=RunStatus.COMPLETED)
    live_state(root, RUN_IDS[1], status=RunStatus.FAILED)
    live_state(root, RUN_IDS[2])


def test_slash_makes_a_search_box_that_filters_and_escape_clears_it(tmp_path: Path) -> None:
    _store(tmp_path)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: len(_shown(app)) == 3, "three runs")
        assert not app.screen.query("#search")  # not made until asked for
        await pilot.press("slash", *"b2")
        search = app.screen.query_one("#search", Input)
        await until(pilot, lambda: search.has_focus, "the search box focused")
        await until(pilot, lambda: _shown(app) == [RUN_IDS[1]], "the one match")
        await pilot.press("enter")  # back to the table, the filter stays
        await until(pilot, lambda: table_at(app.screen, "#runs").has_focus, "the table focused")
        assert _shown(app) == [RUN_IDS[1]]
        await pilot.press("escape")
        await until(pilot, lambda: len(_shown(app)) == 3, "every run again")
        assert not search.display
        assert search.value == ""
        await pilot.press("slash")  # the same box again, empty
        await until(pilot, lambda: search.has_focus, "the search box focused again")
        assert len(app.screen.query("#search")) == 1

    drive(tmp_path, scenario)


def test_f_filters_by_status_and_s_sorts_by_name(tmp_path: Path) -> None:
    _store(tmp_path)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: len(_shown(app)) == 3, "three runs")
        assert _shown(app) == list(reversed(RUN_IDS))  # newest first
        await pilot.press("f", "f")  # all → running → completed
        await until(pilot, lambda: _shown(app) == [RUN_IDS[0]], "the completed run")
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        screen.set_status_filter("all")
        await pilot.press("s", "s")  # started → status → name
        await until(pilot, lambda: _shown(app) == list(RUN_IDS), "sorted by name")

    drive(tmp_path, scenario)


def test_the_footer_of_keys_is_mounted_after_the_first_frame(tmp_path: Path) -> None:
    _store(tmp_path)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        selector = "Footer FooterKey"  # by name: Textual exports no FooterKey type
        await until(pilot, lambda: bool(app.screen.query(selector)), "the keys")
        assert len(app.screen.query(Footer)) == 1
        shown = " ".join(str(key.render()) for key in app.screen.query(selector))
        assert all(word in shown for word in ("New run", "Sort", "Status filter", "Search"))

    drive(tmp_path, scenario)


def test_a_running_run_s_ticking_time_repaints_its_row_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(tmp_path)
    running = RUN_IDS[2]

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        summary = app.screen.query_one("#summary", Static)
        await until(pilot, lambda: "3 of 3 runs" in str(summary.render()), "the full read")
        await until(pilot, lambda: bool(app.screen.query(Footer)), "the keys")
        table = table_at(app.screen, "#runs")
        row = _shown(app).index(running)
        time_column = [column.label.plain for column in table.ordered_columns].index("time")
        cell = Coordinate(row, time_column)
        painted = record_painted(monkeypatch, table)
        for _ in range(2):  # two ticks of the running run's time
            before = str(table.get_cell_at(cell))
            await until(pilot, lambda b=before: str(table.get_cell_at(cell)) != b, "a new time")
            await pilot.pause()  # drawn
        line = table.header_height + row
        assert painted, "the changed row was never drawn again"
        assert set(painted) == {line}, f"lines drawn again: {sorted(set(painted))}"
        assert str(table.get_cell_at(cell)) in type(table).render_line(table, line).text  # as now

    drive(tmp_path, scenario)
