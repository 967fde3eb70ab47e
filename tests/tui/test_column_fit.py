"""Columns fitted to a terminal's width: which come, how wide, and text cut to fit them."""

from __future__ import annotations

import pytest

from stemma.tui.widgets.column_fit import CELL_PADDING, ColumnSpec, cut_middle, fit_columns
from stemma.tui.widgets.run_columns import run_columns


@pytest.mark.parametrize(
    ("width", "keys"),
    [
        (80, ["id", "status", "run", "started", "time"]),
        (100, ["id", "status", "run", "started", "time", "user", "host"]),
        (160, ["id", "status", "run", "started", "time", "steps", "user", "host"]),
        (200, ["id", "status", "run", "started", "time", "steps", "user", "host"]),
    ],
)
def test_the_runs_list_adds_user_host_and_steps_as_the_terminal_widens(
    width: int, keys: list[str]
) -> None:
    columns = run_columns(width)
    assert [column.key for column in columns] == keys
    used = sum(column.width + CELL_PADDING for column in columns)
    assert used <= width  # nothing scrolls sideways
    run = next(column for column in columns if column.key == "run")
    assert run.width >= 30


def test_optional_columns_come_in_priority_order_and_none_jumps_the_queue() -> None:
    specs = (
        ColumnSpec(key="a", title="a", least=10),
        ColumnSpec(key="big", title="big", least=30, priority=1),
        ColumnSpec(key="small", title="small", least=2, priority=2),
    )
    assert [c.key for c in fit_columns(30, specs)] == ["a"]  # small would fit, big comes first
    assert [c.key for c in fit_columns(60, specs)] == ["a", "big", "small"]


def test_spare_room_widens_the_growing_columns_up_to_their_most() -> None:
    specs = (
        ColumnSpec(key="a", title="a", least=10, most=15),
        ColumnSpec(key="b", title="b", least=10, most=40),
    )
    widths = {c.key: c.width for c in fit_columns(100, specs, grow=("a", "b"))}
    assert widths == {"a": 15, "b": 40}


def test_a_command_too_long_is_cut_in_its_middle_keeping_its_arguments() -> None:
    text = "tiny · make_data.py …/store --rows 3"
    assert cut_middle(text, 40) == text
    cut = cut_middle(text, 33)
    assert len(cut) == 33
    assert cut.endswith("--rows 3")
    assert cut.startswith("tiny · ")
