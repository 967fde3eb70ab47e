"""How steps look in the run table: progress bars and the time left."""

from __future__ import annotations

import datetime as dt

from stemma.core.live import StepState
from stemma.tui.widgets.cells import eta_seconds, progress_bar, time_cell

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


def _step(**fields: object) -> StepState:
    started = (NOW - dt.timedelta(seconds=20)).isoformat()
    return StepState(number=1, name="s", operation="o", started_at=started, **fields)  # pyright: ignore[reportArgumentType]


def test_eta_goes_by_the_pace_of_executed_units_not_cached_ones() -> None:
    step = _step(status="running", total=30, cached=10, succeeded=10)
    assert eta_seconds(step, NOW) == 20.0  # 10 executed in 20 s; 10 left
    assert time_cell(step, NOW) == "~20s"


def test_eta_is_unknown_before_a_unit_ran_and_the_time_cell_shows_elapsed() -> None:
    step = _step(status="running", total=30, running=2)
    assert eta_seconds(step, NOW) is None
    assert time_cell(step, NOW) == "20s"


def test_progress_bar_splits_cached_ok_and_failed_cells() -> None:
    bar = progress_bar(_step(status="running", total=10, cached=2, succeeded=5, failed=1), 10)
    assert bar.plain == "████████░░"
    assert [span.style for span in bar.spans][:3] == ["dim green", "green", "red"]
