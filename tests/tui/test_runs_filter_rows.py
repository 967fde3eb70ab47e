"""A filter on a long runs list: the table makes only the rows it draws, the cursor stays on its
run (scrolled into view) as the filter narrows and widens, and the collector's young threshold is
raised while the list is open, then restored."""

from __future__ import annotations

import gc
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static

from stemma.core.live import RunStatus
from stemma.tui.app import StemmaApp
from stemma.tui.screens import RunsScreen
from stemma.tui.widgets.tables import table_at

from .conftest import drive, live_state, until

RUNS = 300


def _run_id(index: int) -> str:
    name = "zeta" if index % 10 == 0 else "demo"
    return f"{name}_20261129_{index // 60:02d}{index % 60:02d}00_{index:08x}"


def _screen(app: StemmaApp) -> RunsScreen:
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return screen


def test_a_filter_on_many_runs_makes_the_rows_drawn_and_keeps_the_cursor_on_its_run(
    tmp_path: Path,
) -> None:
    for index in range(RUNS):
        live_state(tmp_path, _run_id(index), status=RunStatus.COMPLETED)
    before = gc.get_threshold()
    zeta = {_run_id(index) for index in range(0, RUNS, 10)}

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        summary = app.screen.query_one("#summary", Static)
        await until(pilot, lambda: f"{RUNS} runs" in str(summary.render()), "the full read")
        screen, table = _screen(app), table_at(app.screen, "#runs")
        assert gc.get_threshold()[0] == 10_000
        assert len(table.rows_read) <= table.size.height  # the rows drawn, not all 300
        deep = max(i for i, run_id in enumerate(screen.shown) if run_id in zeta)
        assert deep > table.size.height  # a run far below the first screen
        target = screen.shown[deep]
        table.move_cursor(row=deep)
        await pilot.press("slash", *"zeta")
        await until(pilot, lambda: set(screen.shown) == zeta, "the zeta runs")
        assert screen.highlighted_run() == target
        for _ in "zeta":
            await pilot.press("backspace")
        await until(pilot, lambda: len(screen.shown) == RUNS, "every run again")
        await pilot.pause()
        assert screen.highlighted_run() == target
        assert table.cursor_row == deep
        top = round(table.scroll_y)
        assert top <= deep < top + table.size.height - table.header_height  # in view
        assert str(table.get_row_at(deep)[0]) == target[-8:]  # its short id, made when read
        assert len(table.rows_read) <= 3 * table.size.height

    drive(tmp_path, scenario)
    assert gc.get_threshold() == before


def test_the_summary_grows_to_two_lines_for_a_long_filter_and_back_at_80_columns(
    tmp_path: Path,
) -> None:
    for index in range(3):
        live_state(tmp_path, _run_id(index), status=RunStatus.COMPLETED)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        summary = app.screen.query_one("#summary", Static)
        await until(pilot, lambda: "3 runs" in str(summary.render()), "the full read")
        table = table_at(app.screen, "#runs")
        assert summary.size.height == 1
        rows_high = table.size.height
        await pilot.press("slash", *"d")
        await until(pilot, lambda: "filter: d" in str(summary.render()), "the filter")
        assert summary.size.height == 1  # still one line: laid out as before
        await pilot.press(*"emo|" * 8)  # a long expression: the summary wraps
        await until(pilot, lambda: summary.size.height == 2, "a two-line summary")
        await pilot.press("escape")
        await until(pilot, lambda: summary.size.height == 1, "one line again")
        await until(pilot, lambda: table.size.height == rows_high, "the table as tall")

    drive(tmp_path, scenario, size=(80, 24))
