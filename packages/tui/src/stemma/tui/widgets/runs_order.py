"""The runs list's rows in each order, kept between keystrokes: a filter keystroke matches only.

A keystroke on a list of 10,000 runs filtered them by status, fetched each one's search text,
sorted what passed and listed their ids: ~20 ms before anything was drawn. The order of the
runs and their texts change only when the runs do (a poll whose rows are the same but for
running runs keeps them), so :class:`RunsOrder` keeps, per status filter and sort, the run
ids in order with their texts beside them, and a keystroke is one pass of the pattern over
those texts. No Textual and no I/O.
"""

from __future__ import annotations

from stemma.core.cli.run_rows import RunRow
from stemma.core.live import RunStatus
from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.runs_shown import RunCells, visible_runs

_Order = tuple[list[str], list[str]]
"""Run ids in order, and each one's search text, lowered, at the same position."""


class RunsOrder:
    """The rows of a runs list by id, their count running, and their orders (kept)."""

    def __init__(self, cells: RunCells) -> None:
        self._cells = cells
        self.rows: list[RunRow] = []
        """The rows as read (every run, unfiltered)."""
        self.by_id: dict[str, RunRow] = {}
        """Each row by run id."""
        self.running: list[str] = []
        """The running runs' ids."""
        self._orders: dict[tuple[str, str], _Order] = {}

    def take(self, rows: list[RunRow], *, keep_orders: bool = True) -> bool:
        """Hold ``rows`` (every run read); whether they are the rows held but for running runs.

        A running run's row is a new object each poll (its staleness is of now). When every
        new object is a running run's that is still running with the same search text (and
        ``keep_orders``: the caller's order is not by duration), the orders kept stay right.
        One pass comparing objects, then a look at the new ones: the poll hands back the same
        row object for a run whose state did not change.
        """
        same = keep_orders and bool(self.rows) and len(rows) == len(self.rows)
        pairs = zip(self.rows, rows, strict=False)  # (the same length, when it matters)
        changed = [(old, new) for old, new in pairs if old is not new] if same else []
        text = self._cells.text
        same = same and all(
            old.run_id == new.run_id
            and old.status is RunStatus.RUNNING
            and new.status is RunStatus.RUNNING
            and text(old) == text(new)
            for old, new in changed
        )
        if same:
            for _, new in changed:
                self.by_id[new.run_id] = new
        else:
            self.by_id = {row.run_id: row for row in rows}
            self.running = [row.run_id for row in rows if row.status is RunStatus.RUNNING]
            self._orders.clear()
        self.rows = rows
        return same

    def visible(self, status_filter: str, row_filter: RowFilter, sort_by: str) -> list[RunRow]:
        """As :func:`~.runs_shown.visible_runs`, from the order kept for the filter and sort.

        By duration, the order changes as running runs' time ticks: made anew each time.
        """
        if sort_by == "duration":
            text = self._cells.text
            return visible_runs(self.rows, status_filter, row_filter, sort_by=sort_by, text_of=text)
        order = self._orders.get((status_filter, sort_by))
        if order is None:
            ordered = visible_runs(self.rows, status_filter, RowFilter(), sort_by=sort_by)
            texts = [self._cells.text(row).lower() for row in ordered]
            order = ([row.run_id for row in ordered], texts)
            self._orders[(status_filter, sort_by)] = order
        ids = row_filter.select_lowered(*order)
        by_id = self.by_id
        return [by_id[run_id] for run_id in ids]
