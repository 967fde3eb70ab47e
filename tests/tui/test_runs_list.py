"""The runs list's keys: the filter (a box made on the first ``/``), status filters (``f`` cycles,
``x``/``r``/``a`` jump), sort; the footer of keys arrives right after the first frame; a running
run's ticking time repaints its row alone."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path

import pytest
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import Footer, Input, Static

from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline
from stemma.core.live import RunStatus, write_state
from stemma.core.runs.run_rows import RunRow
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
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


def _store_with_commands(root: Path) -> None:
    """Three runs of one script told apart by their arguments, by two users on two hosts."""
    for run_id, status, user, host, size in (
        (RUN_IDS[0], RunStatus.COMPLETED, "ada", "node-a", "1"),
        (RUN_IDS[1], RunStatus.FAILED, "grace", "node-b", "2"),
        (RUN_IDS[2], RunStatus.RUNNING, "ada", "node-a", "10"),
    ):
        state = live_state(root, run_id, status=status)
        command = ("pipelines/slow.py", "--size", size)
        write_state(root, dataclasses.replace(state, user=user, host=host, command=command))


def _column(app: StemmaApp, key: str) -> list[str]:
    table = table_at(app.screen, "#runs")
    keys = [str(column.key.value) for column in table.ordered_columns]
    return [str(table.get_row_at(i)[keys.index(key)]) for i in range(table.row_count)]


def _keys(app: StemmaApp) -> list[str]:
    return [str(column.key.value) for column in table_at(app.screen, "#runs").ordered_columns]


def test_slash_makes_a_filter_box_that_filters_and_escape_clears_it(tmp_path: Path) -> None:
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
        assert all(word in shown for word in ("New run", "Sort", "f x r a", "Filter")), shown

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


def test_a_poll_where_only_the_running_run_changed_filters_and_sorts_nothing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(tmp_path)
    running = RUN_IDS[2]
    calls: list[str] = []
    counted = RunsScreen.visible_rows

    def counting(screen: RunsScreen) -> list[RunRow]:
        calls.append("visible_rows")
        return counted(screen)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        summary = app.screen.query_one("#summary", Static)
        await until(pilot, lambda: "3 of 3 runs" in str(summary.render()), "the full read")
        monkeypatch.setattr(RunsScreen, "visible_rows", counting)
        cell = Coordinate(_shown(app).index(running), _keys(app).index("time"))
        table = table_at(app.screen, "#runs")
        for _ in range(2):  # two polls: the running run's time ticks, in its row
            before = str(table.get_cell_at(cell))
            await until(pilot, lambda b=before: str(table.get_cell_at(cell)) != b, "a new time")
        assert calls == []
        live_state(tmp_path, running, status=RunStatus.COMPLETED)  # it ended: a new row
        status = Coordinate(cell.row, _keys(app).index("status"))
        await until(pilot, lambda: "completed" in str(table.get_cell_at(status)), "its end")
        assert calls != []

    drive(tmp_path, scenario)


def test_x_r_and_a_jump_to_failed_running_and_all_runs(tmp_path: Path) -> None:
    _store(tmp_path)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: len(_shown(app)) == 3, "three runs")
        await pilot.press("x")
        await until(pilot, lambda: _shown(app) == [RUN_IDS[1]], "the failed run")
        await pilot.press("r")
        await until(pilot, lambda: _shown(app) == [RUN_IDS[2]], "the running run")
        await pilot.press("r")  # the same key again: every run
        await until(pilot, lambda: len(_shown(app)) == 3, "every run")
        await pilot.press("x", "a")
        await until(pilot, lambda: len(_shown(app)) == 3, "every run again")

    drive(tmp_path, scenario)


def test_runs_of_one_script_are_told_apart_and_columns_fit_80_then_160_columns(
    tmp_path: Path,
) -> None:
    _store_with_commands(tmp_path)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: len(_shown(app)) == 3, "three runs")
        assert _keys(app) == ["id", "status", "run", "started", "time"]
        assert _column(app, "id") == ["000000c3", "000000b2", "000000a1"]
        assert _column(app, "run") == [  # the pipeline's name first: the script does not say it
            "gamma · slow.py --size 10",
            "beta · slow.py --size 2",
            "alpha · slow.py --size 1",
        ]
        await pilot.resize_terminal(160, 48)
        await until(pilot, lambda: "user" in _keys(app), "the wider columns")
        assert _keys(app) == ["id", "status", "run", "started", "time", "steps", "user", "host"]
        assert _column(app, "user") == ["ada", "grace", "ada"]
        assert _column(app, "host") == ["node-a", "node-b", "node-a"]

    drive(tmp_path, scenario)


def test_slash_matches_short_id_arguments_user_and_host_and_bang_inverts(tmp_path: Path) -> None:
    _store_with_commands(tmp_path)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: len(_shown(app)) == 3, "three runs")
        box = None
        for typed, expected in (
            ("b2", [RUN_IDS[1]]),  # the short id
            (r"size 1\b", [RUN_IDS[0]]),  # the arguments, as a regular expression
            ("grace", [RUN_IDS[1]]),  # the user
            ("node-a", [RUN_IDS[2], RUN_IDS[0]]),  # the host
            ("!ada", [RUN_IDS[1]]),  # inverted
            ("failed", [RUN_IDS[1]]),  # the status
        ):
            if box is None:
                await pilot.press("slash")
                box = app.screen.query_one("#search", Input)
            box.value = typed
            await until(pilot, lambda e=expected: _shown(app) == e, f"the runs matching {typed}")
        summary = app.screen.query_one("#summary", Static)
        await until(pilot, lambda: "filter: failed" in str(summary.render()), "the summary")

    drive(tmp_path, scenario)


def test_a_run_known_only_from_history_shows_its_command_and_user(tmp_path: Path) -> None:
    root = tmp_path / "store"
    pipeline = Pipeline.create("first", root=root, max_workers=1)
    pipeline.run(DataGenerator, params={"count": 1, "rows": 2})
    pipeline.finalize()
    shutil.rmtree(root / "runs")  # its state file goes; the Delta event log stays
    [row] = DashboardClient(root).runs()
    assert not row.live
    assert row.command == tuple(sys.argv)  # this process's, as the run saw it
    assert row.user
    assert row.host
    assert row.description.startswith("first · ")
