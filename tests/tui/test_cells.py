"""How cells look in the tables: progress bars, the time left, text kept as written."""

from __future__ import annotations

import datetime as dt

from rich.text import Text

from stemma.core.live import StepState
from stemma.tui.widgets.cells import eta_seconds, progress_bar, time_cell
from stemma.tui.widgets.tables import plain

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


def _step(**fields: object) -> StepState:
    started = (NOW - dt.timedelta(seconds=20)).isoformat()
    return StepState(number=1, name="s", operation="o", started_at=started, **fields)  # pyright: ignore[reportArgumentType]


def test_eta_goes_by_the_pace_of_executed_units_not_cached_ones() -> None:
    step = _step(status="running", total=30, cached=10, succeeded=20)  # cached ones included
    assert eta_seconds(step, NOW) == 20.0  # 10 executed in 20 s; 10 left
    assert time_cell(step, NOW) == "~20s"


def test_eta_is_unknown_before_a_unit_ran_and_the_time_cell_shows_elapsed() -> None:
    step = _step(status="running", total=30, running=2)
    assert eta_seconds(step, NOW) is None
    assert time_cell(step, NOW) == "20s"


def test_progress_bar_splits_cached_ok_failed_and_cancelled_cells() -> None:
    step = _step(status="running", total=10, cached=2, succeeded=7, failed=1, cancelled=1)
    bar = progress_bar(step, 10)
    assert bar.plain == "█████████░"
    assert [span.style for span in bar.spans][:4] == ["dim green", "green", "red", "yellow"]


def test_a_stale_step_has_no_eta_and_its_time_stops() -> None:
    step = _step(status="stale", total=30, succeeded=10, ended_at="2026-11-29T11:59:50+00:00")
    assert eta_seconds(step, NOW) is None
    assert time_cell(step, NOW) == "10s"


def test_plain_cells_keep_brackets_a_table_would_read_as_markup() -> None:
    cells = plain("TypeError: list[int] expected", 3, Text("ok", style="green"))
    assert [str(cell) for cell in cells] == ["TypeError: list[int] expected", "3", "ok"]
    assert Text.from_markup("list[int]").plain == "list"  # what a plain string became
