"""The runs list's search text is made once per state of a run and matched like ``searchable``."""

from __future__ import annotations

import dataclasses
import datetime as dt

from stemma.core.live import RunStatus
from stemma.core.runs.run_rows import RunRow
from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.run_columns import searchable
from stemma.tui.widgets.runs_shown import RunCells, visible_runs

STARTED = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _row(index: int, *, user: str = "ada") -> RunRow:
    return RunRow(
        run_id=f"slow_20261201_120000_{index:08x}",
        name="slow",
        status=RunStatus.COMPLETED,
        started=STARTED + dt.timedelta(minutes=index),
        ended=STARTED + dt.timedelta(minutes=index + 1),
        steps_done=1,
        steps_total=1,
        user=user,
        command=("pipelines/slow.py", "--size", str(index)),
    )


def test_run_cells_text_is_made_once_per_row_state_and_again_when_the_row_changes() -> None:
    cells = RunCells()
    row = _row(1)
    first = cells.text(row)
    assert first == searchable(row)
    assert cells.text(row) is first  # the same row object: kept
    assert cells.text(dataclasses.replace(row)) is first  # an equal row: kept
    moved = dataclasses.replace(row, user="grace")
    assert cells.text(moved) == searchable(moved) != first
    assert "grace" in cells.text(moved)


def test_visible_runs_with_kept_texts_match_as_with_searchable() -> None:
    rows = [_row(index, user="grace" if index % 3 == 0 else "ada") for index in range(30)]
    cells = RunCells()
    for text in ("grace", "!grace", "size 1", ""):
        row_filter = RowFilter.parse(text)
        kept = visible_runs(rows, "all", row_filter, sort_by="started", text_of=cells.text)
        assert kept == visible_runs(rows, "all", row_filter, sort_by="started")
        assert kept == visible_runs(rows, "all", row_filter, sort_by="started", text_of=cells.text)
