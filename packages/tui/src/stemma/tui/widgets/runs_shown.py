"""What the runs list shows: which runs pass its filters, in which order, their cells, its summary.

No Textual and no I/O: the runs screen hands in its rows and settings and draws the result.
"""

from __future__ import annotations

import datetime as dt

from stemma.core.cli.run_rows import RunRow
from stemma.core.live import RunStatus
from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.column_fit import FittedColumn
from stemma.tui.widgets.run_columns import run_cells, searchable, sort_key
from stemma.tui.wording import counted_of


def visible_runs(
    rows: list[RunRow], status_filter: str, row_filter: RowFilter, *, sort_by: str
) -> list[RunRow]:
    """The rows that pass the status and text filters, newest first or by ``sort_by``."""
    kept = [row for row in rows if status_filter in ("all", row.status.value)]
    kept = row_filter.select(kept, searchable)
    ordered = sorted(kept, key=lambda r: r.started, reverse=True)
    if sort_by != "started":  # stable: newest first within equal keys
        ordered = sorted(ordered, key=sort_key(sort_by, dt.datetime.now(dt.UTC)))
    return ordered


def runs_summary(
    shown: int,
    rows: list[RunRow],
    status_filter: str,
    row_filter: RowFilter,
    sort_by: str,
    partial: bool,
) -> str:
    """The line under the table: ``3 of 10 runs · 1 running · sort: … · status: …``."""
    running = sum(1 for row in rows if row.status is RunStatus.RUNNING)
    return (
        f"{counted_of(shown, len(rows), 'run', more=partial)} · "
        f"{running} running · sort: {sort_by} · status: {status_filter}"
        + (f" · {row_filter.describe()}" if row_filter.active else "")
        + (" · reading the rest…" if partial else "")
    )


class RunCells:
    """Each run's cells, a finished run's built once (they never change) and kept."""

    def __init__(self) -> None:
        self._finished: dict[str, tuple[RunRow, tuple[object, ...]]] = {}

    def clear(self) -> None:
        """Forget every kept row (the columns changed)."""
        self._finished.clear()

    def of(
        self, row: RunRow, now: dt.datetime, columns: tuple[FittedColumn, ...]
    ) -> tuple[object, ...]:
        """The cells of ``row`` in ``columns``; a running run's are built anew (its time ticks)."""
        if row.status is RunStatus.RUNNING:
            return run_cells(row, now, columns)
        kept = self._finished.get(row.run_id)
        # The client hands back the same row object for a run whose state did not change.
        if kept is None or (kept[0] is not row and kept[0] != row):
            kept = self._finished[row.run_id] = (row, run_cells(row, now, columns))
        return kept[1]
