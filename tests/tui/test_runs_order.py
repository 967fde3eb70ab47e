"""The runs list's kept orders (``RunsOrder``) and matching lowered texts (``select_lowered``).

A filter keystroke matches kept, lowered texts instead of filtering and sorting every run: these
tests hold it to what ``visible_runs`` and ``RowFilter.select`` say, through polls that bring new
row objects for running runs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

import pytest

from stemma.core.live import RunStatus
from stemma.core.runs.run_rows import RunRow
from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.run_columns import run_columns, searchable
from stemma.tui.widgets.runs_order import RunsOrder
from stemma.tui.widgets.runs_shown import RunCells, visible_runs

STARTED = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
STATUSES = (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.RUNNING)


def _row(index: int, status: RunStatus = RunStatus.COMPLETED) -> RunRow:
    return RunRow(
        run_id=f"{'zeta' if index % 4 == 0 else 'demo'}_20261201_120000_{index:08x}",
        name="zeta" if index % 4 == 0 else "demo",
        status=status,
        started=STARTED + dt.timedelta(minutes=index * 7 % 50),
        ended=None if status is RunStatus.RUNNING else STARTED + dt.timedelta(hours=1),
        steps_done=1,
        steps_total=2,
        user="Ada" if index % 3 == 0 else "grace",
        command=("pipelines/slow.py", "--size", str(index)),
    )


ROWS = [_row(index, STATUSES[index % 3]) for index in range(60)]
TYPED = ("", "z", "ZE", "ada", "!grace", "size 1", r"size 1\b", "[0-9]{2}$", r"\D1", "fail(")


@pytest.mark.parametrize("typed", TYPED)
def test_select_lowered_keeps_what_select_keeps(typed: str) -> None:
    row_filter = RowFilter.parse(typed)
    texts = [searchable(row) for row in ROWS]
    lowered = [text.lower() for text in texts]
    assert row_filter.select_lowered(ROWS, lowered) == row_filter.select(ROWS, searchable)
    assert row_filter.select_lowered(texts, lowered) == [t for t in texts if row_filter.matches(t)]


@pytest.mark.parametrize("sort_by", ["started", "status", "name", "duration"])
@pytest.mark.parametrize("status", ["all", "running", "failed"])
def test_runs_order_shows_what_visible_runs_shows(sort_by: str, status: str) -> None:
    order = RunsOrder(RunCells())
    order.take(ROWS)
    for typed in TYPED:
        row_filter = RowFilter.parse(typed)
        shown = order.visible(status, row_filter, sort_by)
        assert shown == visible_runs(ROWS, status, row_filter, sort_by=sort_by)
        assert order.shown_ids == [row.run_id for row in shown]


def test_a_poll_with_new_running_rows_keeps_the_orders_and_shows_the_new_rows() -> None:
    order = RunsOrder(RunCells())
    order.take(ROWS)
    before = order.visible("all", RowFilter.parse("demo"), "started")
    polled = [dataclasses.replace(r) if r.status is RunStatus.RUNNING else r for r in ROWS]
    assert order.take(polled)  # the same but running runs: orders kept
    after = order.visible("all", RowFilter.parse("demo"), "started")
    assert after == before
    running = [row for row in after if row.status is RunStatus.RUNNING]
    assert running
    assert all(any(row is new for new in polled) for row in running)  # the new objects
    assert all(not any(row is old for old in ROWS) for row in running)
    assert order.running == [row.run_id for row in ROWS if row.status is RunStatus.RUNNING]


def _ended(row: RunRow) -> RunRow:
    return dataclasses.replace(row, status=RunStatus.COMPLETED)


def _moved(row: RunRow) -> RunRow:
    return dataclasses.replace(row, user="someone")  # its search text changes


@pytest.mark.parametrize("change", [_ended, _moved])
def test_a_poll_where_a_run_ended_or_its_text_changed_orders_anew(
    change: Callable[[RunRow], RunRow],
) -> None:
    order = RunsOrder(RunCells())
    order.take(ROWS)
    order.visible("all", RowFilter.parse("someone"), "status")
    running = next(i for i, row in enumerate(ROWS) if row.status is RunStatus.RUNNING)
    polled = list(ROWS)
    polled[running] = change(ROWS[running])
    assert not order.take(polled)
    for typed in ("someone", ""):
        shown = order.visible("all", RowFilter.parse(typed), "status")
        assert shown == visible_runs(polled, "all", RowFilter.parse(typed), sort_by="status")


def test_the_rows_returned_can_be_changed_without_changing_the_kept_order() -> None:
    order = RunsOrder(RunCells())
    order.take(ROWS)
    shown = order.visible("all", RowFilter(), "name")
    shown.clear()
    assert order.visible("all", RowFilter(), "name") == visible_runs(
        ROWS, "all", RowFilter(), sort_by="name"
    )


def test_a_running_run_s_cells_that_read_as_before_are_the_objects_shown_before() -> None:
    """An idle second redraws a running run's time cell alone (the table renders a cell again
    only when its object changed); a cell whose text changed is a new object."""
    cells = RunCells()
    columns = run_columns(200)
    keys = [column.key for column in columns]
    row = _row(4, RunStatus.RUNNING)
    first = cells.of(row, STARTED + dt.timedelta(hours=1), columns)
    second = cells.of(row, STARTED + dt.timedelta(hours=1, seconds=1), columns)
    changed = [key for key, a, b in zip(keys, first, second, strict=True) if a is not b]
    assert changed == ["time"]
    assert str(second[keys.index("time")]) != str(first[keys.index("time")])
    # the next state of the run: its steps column changes too, and a finished run's cells
    # are no longer the running ones
    later = dataclasses.replace(row, steps_done=2)
    third = cells.of(later, STARTED + dt.timedelta(hours=1, seconds=1), columns)
    assert [key for key, a, b in zip(keys, second, third, strict=True) if a is not b] == ["steps"]
    ended = dataclasses.replace(later, status=RunStatus.COMPLETED, ended=STARTED)
    done = cells.of(ended, STARTED + dt.timedelta(hours=2), columns)
    assert str(done[keys.index("status")]) == "completed"
