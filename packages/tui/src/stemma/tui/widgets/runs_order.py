"""The runs list's rows in each order, kept between keystrokes: a filter keystroke matches only.

A keystroke on a list of 10,000 runs filtered them by status, fetched each one's search text,
sorted what passed and listed their ids: ~20 ms before anything was drawn. The order of the
runs and their texts change only when the runs do (a poll whose rows are the same but for
running runs keeps them), so :class:`RunsOrder` keeps, per status filter and sort, the rows in
order with their ids and lowered texts beside them: a keystroke is one pass of the pattern
over those texts, and deleting the filter hands back the kept lists. No Textual and no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stemma.core.live import RunStatus
from stemma.core.runs.run_rows import RunRow
from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.runs_shown import RunCells, visible_runs


@dataclass(frozen=True)
class _Order:
    """The rows passing one status filter, in one order, with what a keystroke needs."""

    rows: list[RunRow]
    ids: list[str]
    """Each row's run id, at the same position."""
    lowered: list[str]
    """Each row's search text, lowered, at the same position."""
    at: dict[str, int] = field(default_factory=dict[str, int])
    """Each run id's position (a new row object for a running run goes there)."""


class RunsOrder:
    """The rows of a runs list by id, the running ones, and their orders (kept)."""

    def __init__(self, cells: RunCells) -> None:
        self._cells = cells
        self.rows: list[RunRow] = []
        """The rows as read (every run, unfiltered)."""
        self.by_id: dict[str, RunRow] = {}
        """Each row by run id."""
        self.running: list[str] = []
        """The running runs' ids."""
        self.shown_ids: list[str] = []
        """The run ids of the rows :meth:`visible` returned last, in order: not to be changed
        (it may be a list kept here)."""
        self._orders: dict[tuple[str, str], _Order] = {}

    def take(self, rows: list[RunRow], *, keep_orders: bool = True) -> bool:
        """Hold ``rows`` (every run read); whether they are the rows held but for running runs.

        A running run's row is a new object each poll (its staleness is of now). When every
        new object is a running run's that is still running with the same search text (and
        ``keep_orders``: the caller's order is not by duration), the orders kept stay right
        with the new objects put in their places. One pass comparing objects, then a look at
        the new ones: the poll hands back the same row object for a run whose state did not
        change.
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
                for order in self._orders.values():
                    if (position := order.at.get(new.run_id)) is not None:
                        order.rows[position] = new
        else:
            self.by_id = {row.run_id: row for row in rows}
            self.running = [row.run_id for row in rows if row.status is RunStatus.RUNNING]
            self._orders.clear()
        self.rows = rows
        return same

    def visible(self, status_filter: str, row_filter: RowFilter, sort_by: str) -> list[RunRow]:
        """As :func:`~.runs_shown.visible_runs`, from the order kept for the filter and sort.

        Their ids are :attr:`shown_ids` then. By duration, the order changes as running runs'
        time ticks: made anew each time.
        """
        if sort_by == "duration":
            text = self._cells.text
            rows = visible_runs(self.rows, status_filter, row_filter, sort_by=sort_by, text_of=text)
            self.shown_ids = [row.run_id for row in rows]
            return rows
        order = self._orders.get((status_filter, sort_by))
        if order is None:
            order = self._order(status_filter, sort_by)
            self._orders[(status_filter, sort_by)] = order
        if not row_filter.active:
            self.shown_ids = order.ids
            return list(order.rows)  # (a copy: the caller may change it; ~50 µs for 10,000)
        kept = row_filter.select_lowered(range(len(order.ids)), order.lowered)
        ids, rows = order.ids, order.rows
        self.shown_ids = [ids[position] for position in kept]
        return [rows[position] for position in kept]

    def _order(self, status_filter: str, sort_by: str) -> _Order:
        rows = visible_runs(self.rows, status_filter, RowFilter(), sort_by=sort_by)
        ids = [row.run_id for row in rows]
        lowered = [self._cells.text(row).lower() for row in rows]
        at = {run_id: position for position, run_id in enumerate(ids)}
        return _Order(rows=rows, ids=ids, lowered=lowered, at=at)
