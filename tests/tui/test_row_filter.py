"""The one filter rule of every table (`/`), and the box that types it."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.widgets import Static

from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.filter_box import FilterBox

ROWS = ["run_a failed transform", "run_b done generate", "run_c running Transform.v2"]


def kept(text: str) -> list[str]:
    return RowFilter.parse(text).select(ROWS, lambda row: row)


def test_plain_text_is_a_case_insensitive_substring() -> None:
    assert kept("TRANSFORM") == [ROWS[0], ROWS[2]]
    assert kept("run_b") == [ROWS[1]]


def test_a_regular_expression_matches_as_one() -> None:
    assert kept(r"run_[ab]\b") == [ROWS[0], ROWS[1]]
    assert kept(r"v\d$") == [ROWS[2]]


def test_bang_inverts() -> None:
    assert kept("!done") == [ROWS[0], ROWS[2]]
    assert kept("! transform") == [ROWS[1]]


def test_half_typed_expression_is_matched_literally() -> None:
    assert kept("transform.v2(") == []
    assert kept("Transform.v") == [ROWS[2]]
    assert RowFilter.parse("[").matches("a [ b")


def test_blank_and_lone_bang_pass_every_row() -> None:
    for text in ("", "   ", "!", " ! "):
        row_filter = RowFilter.parse(text)
        assert not row_filter.active
        assert row_filter.describe() == ""
        assert kept(text) == ROWS


def test_describe_names_the_filter() -> None:
    assert RowFilter.parse(" !done ").describe() == "filter: !done"


class BoxApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []
        self.done = 0

    def compose(self) -> ComposeResult:
        yield FilterBox(id="filter")
        yield Static("table", id="table")

    def on_filter_box_filtered(self, message: FilterBox.Filtered) -> None:
        self.seen.append(message.row_filter.text)

    def on_filter_box_done(self, _message: FilterBox.Done) -> None:
        self.done += 1


def test_the_box_opens_filters_as_you_type_and_escape_clears() -> None:
    async def play() -> None:
        app = BoxApp()
        async with app.run_test(size=(80, 24)) as pilot:
            box = app.query_one(FilterBox)
            assert not box.display
            box.open()
            await pilot.press("f", "a", "i", "l")
            await pilot.pause()
            assert box.display
            assert box.has_focus
            assert box.outer_size.height == 1  # one line, even focused
            assert app.seen == ["f", "fa", "fai", "fail"]
            await pilot.press("enter")
            await pilot.pause()
            assert app.done == 1
            assert box.display
            assert box.row_filter.matches("step failed")
            box.focus()
            await pilot.press("escape")
            await pilot.pause()
            assert app.done == 2
            assert not box.display
            assert not box.row_filter.active
            assert app.seen[-1] == ""

    asyncio.run(play())
