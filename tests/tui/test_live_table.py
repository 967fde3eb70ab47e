"""``LiveTable.update_row_at``: the row shows its new cells, drawn anew; the others are not.

It drops Textual's private cache entries of one row (see ``widgets/live_table.py``); these tests
fail if a Textual upgrade moves them, instead of the dashboard showing a stale row.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable
from textual.widgets.data_table import DuplicateKey, RowKey

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


class TwoTables(App[None]):
    """A LiveTable and Textual's own DataTable with the same columns, side by side."""

    def __init__(self, *, auto_width: bool = False) -> None:
        super().__init__()
        self.auto_width = auto_width
        self.highlighted: dict[str | None, list[int]] = {"live": [], "plain": []}
        """Per table, the row of each RowHighlighted it posted."""

    @property
    def plain_table(self) -> DataTable[object]:
        """Textual's own table."""
        return cast("DataTable[object]", self.query_one("#plain", DataTable))

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        table = cast("DataTable[object]", message.data_table)
        self.highlighted[table.id].append(message.cursor_row)

    def compose(self) -> ComposeResult:
        yield new_table("live", zebra=True)
        yield DataTable[object](id="plain", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        for table in (self.query_one("#live", LiveTable), self.plain_table):
            if self.auto_width:
                table.add_columns("name", "time")
            else:
                table.add_column("name", key="name", width=8)
                table.add_column("time", key="time", width=6)


def _drawn(table: DataTable[object]) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


MANY = [plain(f"run{index:04d}", f"{index}s") for index in range(300)]


@pytest.mark.parametrize("auto_width", [False, True])
def test_add_rows_leaves_the_table_as_datatable_does(auto_width: bool) -> None:
    async def play() -> None:
        app = TwoTables(auto_width=auto_width)
        async with app.run_test(size=(60, 30)) as pilot:
            live = app.query_one("#live", LiveTable)
            plain_table = app.plain_table
            live.add_rows(MANY[:5])
            plain_table.add_rows(MANY[:5])
            live.add_rows(MANY[5:])
            plain_table.add_rows(MANY[5:])
            live.move_cursor(row=7)
            plain_table.move_cursor(row=7)
            await pilot.pause()
            assert live.row_count == plain_table.row_count == len(MANY)
            assert live.virtual_size == plain_table.virtual_size
            assert [c.get_render_width(live) for c in live.ordered_columns] == [
                c.get_render_width(plain_table) for c in plain_table.ordered_columns
            ]
            assert _drawn(live) == _drawn(plain_table)
            assert live.cursor_row == 7
            assert app.highlighted["live"] == app.highlighted["plain"] != []

    asyncio.run(play())


def test_add_rows_refuses_a_row_wider_than_the_table() -> None:
    async def play() -> None:
        app = OneTable()
        async with app.run_test(size=(40, 8)):
            with pytest.raises(ValueError, match="3 cells for 2 columns"):
                app.query_one(LiveTable).add_rows([plain("a", "b", "c")])

    asyncio.run(play())


def test_replace_rows_shows_what_clear_and_add_row_would() -> None:
    async def play() -> None:
        app = TwoTables()
        async with app.run_test(size=(60, 30)) as pilot:
            live = app.query_one("#live", LiveTable)
            plain_table = app.plain_table
            for shown in (MANY, MANY[10:20], MANY[::-1], []):
                live.move_cursor(row=3)
                plain_table.move_cursor(row=3)
                live.replace_rows([(str(cells[0]), cells) for cells in shown])
                plain_table.clear()
                for cells in shown:
                    plain_table.add_row(*cells, key=str(cells[0]))
                await pilot.pause()
                assert live.virtual_size == plain_table.virtual_size
                assert _drawn(live) == _drawn(plain_table)
                assert live.cursor_row == plain_table.cursor_row == 0
                if shown:
                    assert live.get_row(str(shown[-1][0])) == list(shown[-1])
            assert app.highlighted["live"] == app.highlighted["plain"] != []

    asyncio.run(play())


def test_replace_rows_puts_back_rows_given_the_same_cells_and_remakes_the_others() -> None:
    async def play() -> None:
        app = OneTable()
        async with app.run_test(size=(40, 8)) as pilot:
            table = app.query_one(LiveTable)
            alpha, beta = plain("alpha", "1s"), plain("beta", "2s")
            table.replace_rows([("a", alpha), ("b", beta)])
            made = {key.value: row for key, row in table.rows.items()}
            table.replace_rows([("b", beta)])
            later = plain("alpha", "5s")
            table.replace_rows([("a", later), ("b", beta)])
            await pilot.pause()
            now = {key.value: row for key, row in table.rows.items()}
            assert now["b"] is made["b"]  # same cells object: the same row
            assert now["a"] is not made["a"]
            assert [str(cell) for cell in table.get_row("a")] == ["alpha", "5s"]
            table.update_row_at(0, plain("alpha", "9s"))  # the row no longer has `later`
            table.replace_rows([("a", later), ("b", beta)])
            assert [str(cell) for cell in table.get_row("a")] == ["alpha", "5s"]

    asyncio.run(play())


def test_replace_rows_refuses_a_key_given_twice() -> None:
    async def play() -> None:
        app = OneTable()
        async with app.run_test(size=(40, 8)):
            with pytest.raises(DuplicateKey, match="1 keys given twice"):
                app.query_one(LiveTable).replace_rows([("a", plain("a", "1")), ("a", plain("b"))])

    asyncio.run(play())


def _segments(table: DataTable[object]) -> list[list[object]]:
    """Each drawn line's text and styles, click metadata (the row's index) included."""
    lines = [table.render_line(y) for y in range(table.size.height)]
    return [[(segment.text, segment.style) for segment in line] for line in lines]


def test_replace_rows_draws_rows_moved_or_changed_as_datatable_does() -> None:
    async def play() -> None:
        app = TwoTables()
        async with app.run_test(size=(60, 30)) as pilot:
            live = app.query_one("#live", LiveTable)
            plain_table = app.plain_table
            # Neither focused, for good: a change of focus restyles (and draws) every cell.
            live.can_focus = plain_table.can_focus = False
            app.set_focus(None)
            changed = [plain("run0002", "late"), *MANY[3:40]]  # key run0002, new cells
            for shown in (MANY[:40], MANY[4:44], MANY[:40], MANY[2:3] + MANY[3:40], changed):
                live.replace_rows([(str(cells[0]), cells) for cells in shown])
                plain_table.clear()
                for cells in shown:
                    plain_table.add_row(*cells, key=str(cells[0]))
                await pilot.pause()
                assert _segments(live) == _segments(plain_table)
            assert "late" in live.render_line(1).text
            live.update_cell("run0010", "time", "edited")
            plain_table.update_cell("run0010", "time", "edited")
            live.move_cursor(row=4)
            plain_table.move_cursor(row=4)
            await pilot.pause()
            assert _segments(live) == _segments(plain_table)
            assert "edited" in live.render_line(9).text

    asyncio.run(play())


def test_replace_rows_with_the_rows_shown_renders_no_cell_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def play() -> None:
        app = OneTable()
        async with app.run_test(size=(40, 30)) as pilot:
            table = app.query_one(LiveTable)
            shown = [(str(cells[0]), cells) for cells in MANY[:40]]
            table.replace_rows(shown)
            await pilot.pause()
            first = [table.render_line(y).text for y in range(table.size.height)]
            rendered: list[object] = []
            render_lines = app.console.render_lines

            def counted(*args: object, **kwargs: object) -> object:
                rendered.append(args[0])
                return render_lines(*args, **kwargs)  # pyright: ignore[reportArgumentType]

            monkeypatch.setattr(app.console, "render_lines", counted)
            table.replace_rows(shown[20:])  # a filter typed: other rows, cells rendered
            await pilot.pause()
            assert rendered
            rendered.clear()
            table.replace_rows(shown)  # and deleted: the first frame's cells come back
            await pilot.pause()
            again = [table.render_line(y).text for y in range(table.size.height)]
            assert again == first
            assert rendered == []

    asyncio.run(play())


def _cells_of(
    shown: list[tuple[object, ...]], asked: list[str]
) -> Callable[[str], tuple[object, ...]]:
    """A ``cells_of`` for ``show_rows`` over ``shown`` (keyed by the first cell), recording."""
    by_key = {str(cells[0]): cells for cells in shown}

    def cells_of(key: str) -> tuple[object, ...]:
        asked.append(key)
        return by_key[key]

    return cells_of


def test_show_rows_makes_only_the_rows_drawn_and_draws_as_datatable_does() -> None:
    async def play() -> None:
        app = TwoTables()
        async with app.run_test(size=(60, 30)) as pilot:
            live = app.query_one("#live", LiveTable)
            plain_table = app.plain_table
            live.can_focus = plain_table.can_focus = False  # (focus restyles every cell)
            app.set_focus(None)
            for shown in (MANY, MANY[10:20], MANY[::-1], []):
                asked: list[str] = []
                live.show_rows([str(cells[0]) for cells in shown], _cells_of(shown, asked))
                plain_table.clear()
                for cells in shown:
                    plain_table.add_row(*cells, key=str(cells[0]))
                await pilot.pause()
                assert live.row_count == plain_table.row_count == len(shown)
                assert live.virtual_size == plain_table.virtual_size
                assert _segments(live) == _segments(plain_table)
                assert len(set(asked)) == len(asked) <= live.size.height  # once, rows drawn
                assert set(live.rows_read) == set(asked)
                if shown:
                    last = len(shown) - 1
                    assert live.get_row_at(last) == plain_table.get_row_at(last)
                    assert asked[-1] == str(shown[last][0])  # read: made then
            assert app.highlighted["live"] == app.highlighted["plain"] != []

    asyncio.run(play())


@pytest.mark.parametrize("keys", [["down"] * 3, ["pagedown", "pagedown"], ["end", "pageup"]])
def test_show_rows_moves_the_cursor_and_scrolls_as_datatable_does(keys: list[str]) -> None:
    async def play() -> None:
        app = TwoTables()
        async with app.run_test(size=(60, 30)) as pilot:
            live = app.query_one("#live", LiveTable)
            plain_table = app.plain_table
            asked: list[str] = []
            live.show_rows([str(cells[0]) for cells in MANY], _cells_of(MANY, asked))
            plain_table.add_rows(MANY)
            await pilot.pause()  # both laid out: a page is a page of each one's height
            for table in (live, plain_table):
                table.focus()
                for key in keys:  # each key's scroll done before the next (a loaded machine)
                    await pilot.press(key)
                    await pilot.pause()
            app.set_focus(None)  # both drawn unfocused (focus restyles every cell)
            await pilot.pause()
            assert live.cursor_row == plain_table.cursor_row
            assert live.scroll_offset == plain_table.scroll_offset
            assert _segments(live) == _segments(plain_table)
            assert len(asked) < len(MANY) // 2  # the rows passed over were never made
            live.move_cursor(row=250)
            plain_table.move_cursor(row=250)
            await pilot.pause()
            assert live.scroll_offset == plain_table.scroll_offset
            assert _segments(live) == _segments(plain_table)

    asyncio.run(play())


def test_show_rows_then_a_click_selects_the_row_clicked() -> None:
    selected: list[tuple[str | None, int, str | None]] = []

    class Clicked(TwoTables):
        def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
            table = cast("DataTable[object]", message.data_table)
            selected.append((table.id, message.cursor_row, message.row_key.value))

    async def play() -> None:
        app = Clicked()
        async with app.run_test(size=(60, 30)) as pilot:
            live = app.query_one("#live", LiveTable)
            live.show_rows([str(cells[0]) for cells in MANY[100:]], _cells_of(MANY, []))
            await pilot.pause()
            await pilot.click(live, offset=(2, 3))  # the header, then rows 0 and 1: row 2
            await pilot.click(live, offset=(2, 3))  # on the highlighted row: selected
            await pilot.pause()
            assert selected == [("live", 2, "run0102")]

    asyncio.run(play())


def test_show_rows_then_add_row_sort_and_a_new_column_leave_what_datatable_would() -> None:
    async def play() -> None:
        app = TwoTables()
        async with app.run_test(size=(60, 30)) as pilot:
            live = app.query_one("#live", LiveTable)
            plain_table = app.plain_table
            live.can_focus = plain_table.can_focus = False  # (focus restyles every cell)
            app.set_focus(None)
            shown = MANY[:50]
            live.show_rows([str(cells[0]) for cells in shown], _cells_of(shown, []))
            for cells in shown:
                plain_table.add_row(*cells, key=str(cells[0]))
            for table in (live, plain_table):
                table.add_row(*plain("zz-new", "0s"), key="zz-new")
                table.sort("name", key=str, reverse=True)
                table.remove_row("run0003")
                table.add_column("more", key="more", width=4, default="-")
            await pilot.pause()
            assert live.row_count == plain_table.row_count == 50
            assert [live.get_row_at(i) for i in range(50)] == [
                plain_table.get_row_at(i) for i in range(50)
            ]
            assert _segments(live) == _segments(plain_table)

    asyncio.run(play())


def test_show_rows_refuses_a_key_given_twice() -> None:
    async def play() -> None:
        app = OneTable()
        async with app.run_test(size=(40, 8)):
            with pytest.raises(DuplicateKey, match="1 keys given twice"):
                app.query_one(LiveTable).show_rows(["a", "b", "a"], lambda key: plain(key, "1"))

    asyncio.run(play())


def test_lines_shown_again_are_not_drawn_again_and_a_changed_row_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def play() -> None:
        app = OneTable()
        async with app.run_test(size=(40, 30)) as pilot:
            table = app.query_one(LiveTable)
            keys = [str(cells[0]) for cells in MANY[:40]]
            cells_of = _cells_of(MANY, [])
            table.show_rows(keys, cells_of)
            await pilot.pause()
            first = [table.render_line(y).text for y in range(table.size.height)]
            drawn: list[str] = []
            draw_row = table._render_line_in_row  # pyright: ignore[reportPrivateUsage]

            def counted(row_key: RowKey, *args: object, **kwargs: object) -> object:
                if row_key.value is not None:  # the header is drawn as Textual draws it
                    drawn.append(row_key.value)
                return draw_row(row_key, *args, **kwargs)  # pyright: ignore[reportArgumentType]

            monkeypatch.setattr(table, "_render_line_in_row", counted)
            table.show_rows(keys[20:], cells_of)  # a filter typed
            await pilot.pause()
            table.show_rows(keys, cells_of)  # and deleted: the same lines come back
            drawn.clear()
            await pilot.pause()
            assert [table.render_line(y).text for y in range(table.size.height)] == first
            assert drawn == []
            table.move_cursor(row=2)  # the cursor leaves row 0 for row 2: those two lines
            await pilot.pause()
            assert sorted(drawn) == ["run0000", "run0002"]
            drawn.clear()
            table.update_row_at(5, plain("run0005", "late"))
            await pilot.pause()
            assert drawn == ["run0005"]
            assert "late" in table.render_line(6).text

    asyncio.run(play())
