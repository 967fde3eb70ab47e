"""Cancel feedback leaves the step table readable, at 80x24 as at 200x50.

The run screen's cancel bar already says which level was asked and what the next press does,
so a press there raises no toast over the table; on the runs list (no bar) the toast is one
line, over the footer.

Toasts are off in ``run_test`` by default: these tests turn them on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets._toast import Toast

from stemma.core.live import StepState, pending_requests
from stemma.tui.app import StemmaApp
from stemma.tui.screens import RunScreen
from stemma.tui.widgets.tables import table_at

from .conftest import Scenario, live_state, row_count, until
from .test_snapshots import screen_text

SIZES = [(80, 24), (100, 30), (160, 48), (200, 50)]


def _many_steps() -> tuple[StepState, ...]:
    """Enough steps to fill the table to the bottom of an 80x24 screen."""
    now = dt.datetime.now(dt.UTC).isoformat()
    return tuple(
        StepState(
            number=n,
            name=f"stage{n:02d}",
            operation="op",
            status="running" if n == 0 else "pending",
            total=10,
            succeeded=2 if n == 0 else 0,
            running=2 if n == 0 else 0,
            started_at=now if n == 0 else None,
        )
        for n in range(20)
    )


def drive(root: Path, scenario: Scenario, size: tuple[int, int]) -> None:
    """The real app at ``size`` with its toasts shown, playing ``scenario``."""

    async def play() -> None:
        app = StemmaApp(root)
        async with app.run_test(size=size, notifications=True) as pilot:
            await scenario(app, pilot)

    asyncio.run(play())


def _toast_regions(app: StemmaApp) -> list[Region]:
    return [toast.region for toast in app.screen.query(Toast) if toast.region.area]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_c_on_the_run_screen_covers_none_of_the_step_rows(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    root = tmp_path / "store"
    state = live_state(root, steps=_many_steps())

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run(state.run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
        await until(pilot, lambda: row_count(app, "#steps") == 20, "the steps")
        await pilot.press("c")
        await until(pilot, lambda: len(pending_requests(root, state.run_id)) == 1, "a request")
        await pilot.pause(0.3)  # a toast, had one been raised, is mounted by now
        table = table_at(app.screen, "#steps")
        assert not [r for r in _toast_regions(app) if r.overlaps(table.region)]
        text = screen_text(app)
        shown = [f"stage{n:02d}" for n in range(20) if f"stage{n:02d}" in text]
        assert len(shown) >= min(20, table.region.height - 2)  # every row it has room for
        assert "cancel 1/3 asked: graceful" in text  # the bar says it instead

    drive(root, scenario, size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_c_on_the_runs_list_toasts_one_line_over_the_footer(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    root = tmp_path / "store"
    state = live_state(root)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        runs = table_at(app.screen, "#runs")
        await until(pilot, lambda: runs.row_count == 1, "the run")
        await until(pilot, lambda: "Cancel" in screen_text(app), "the footer")
        await pilot.press("c")
        await until(pilot, lambda: bool(_toast_regions(app)), "the toast")
        [region] = _toast_regions(app)
        assert region.height == 1
        assert region.y == size[1] - 1  # the footer's line, not the table's
        assert f"cancel 1/3 asked of {state.run_id[-8:]}: graceful" in screen_text(app)

    drive(root, scenario, size)
