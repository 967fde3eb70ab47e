"""``LiveTable.update_row_at``: the row shows its new cells, drawn anew; the others are not.

It drops Textual's private cache entries of one row (see ``widgets/live_table.py``); these tests
fail if a Textual upgrade moves them, instead of the dashboard showing a stale row.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult

from stemma.tui.widgets.live_table import LiveTable
from stemma.tui.widgets.tables import new_table, plain

from .conftest import record_painted

ROWS = (("alpha", "1s"), ("beta", "2s"), ("gamma", "3s"))


class OneTable(App[None]):
    """A table of :data:`ROWS`, nothing else."""

    def compose(self) -> ComposeResult:
        yield new_table("table", zebra=True)

    def on_mount(self) -> None:
        table = self.query_one(LiveTable)
        table.add_column("name", key="name", width=8)
        table.add_column("time", key="time", width=6)
        table.add_rows([plain(*row) for row in ROWS])


@pytest.mark.parametrize("cursor_row", [0, 1])  # the cursor on another row, then on this one
def test_update_row_at_draws_the_new_cells_of_that_row_alone(
    cursor_row: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def play() -> None:
        app = OneTable()
        async with app.run_test(size=(40, 8)) as pilot:
            table = app.query_one(LiveTable)
            table.move_cursor(row=cursor_row)
            await pilot.pause()
            before = [table.render_line(y).text for y in range(1 + len(ROWS))]
            painted = record_painted(monkeypatch, table)
            table.update_row_at(1, plain("beta", "10s"))
            await pilot.pause()
            assert [str(cell) for cell in table.get_row_at(1)] == ["beta", "10s"]
            assert set(painted) == {table.header_height + 1}
            after = [
                LiveTable.render_line(table, y).text for y in range(1 + len(ROWS))
            ]  # unrecorded
            assert "10s" in after[2]
            assert after[:2] + after[3:] == before[:2] + before[3:]

    asyncio.run(play())


def test_update_row_at_refuses_a_row_of_the_wrong_width() -> None:
    async def play() -> None:
        app = OneTable()
        async with app.run_test(size=(40, 8)):
            with pytest.raises(ValueError, match="1 cells for 2 columns"):
                app.query_one(LiveTable).update_row_at(0, plain("alpha"))

    asyncio.run(play())
