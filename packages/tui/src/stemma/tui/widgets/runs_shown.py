"""What the runs list shows: which runs pass its filters, in which order, their cells, its summary.

No Textual and no I/O: the runs screen hands in its rows and settings and draws the result.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from rich.text import Text

from stemma.core.live import RunStatus
from stemma.core.runs.run_rows import RunRow
from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.column_fit import FittedColumn
from stemma.tui.widgets.run_columns import run_cells, searchable, sort_key
from stemma.tui.wording import counted_of


def visible_runs(
    rows: list[RunRow],
    status_filter: str,
    row_filter: RowFilter,
    *,
    sort_by: str,
    text_of: Callable[[RunRow], str] = searchable,
) -> list[RunRow]:
    """The rows that pass the status and text filters, newest first or by ``sort_by``.

    ``text_of`` is what ``/`` matches a row on (:meth:`RunCells.text`: kept between keystrokes).
    """
    kept = rows if status_filter == "all" else [r for r in rows if r.status.value == status_filter]
    kept = row_filter.select(kept, text_of)
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
    *,
    running: int | None = None,
) -> str:
    """The line under the table: ``3 of 10 runs · 1 running · sort: … · status: …``.

    ``running`` is how many ``rows`` are running, when the caller counted them already.
    """
    if running is None:
        running = sum(1 for row in rows if row.status is RunStatus.RUNNING)
    return (
        f"{counted_of(shown, len(rows), 'run', more=partial)} · "
        f"{running} running · sort: {sort_by} · status: {status_filter}"
        + (f" · {row_filter.describe()}" if row_filter.active else "")
        + (" · reading the rest…" if partial else "")
    )


class RunCells:
    """Each run's cells, a finished run's built once (they never change) and kept.

    And each run's search text: joining five strings per row per keystroke was ~20 ms of a
    filter keystroke on 10,000 runs.
    """

    def __init__(self) -> None:
        self._finished: dict[str, tuple[RunRow, tuple[object, ...]]] = {}
        self._running: dict[str, tuple[object, ...]] = {}
        self._texts: dict[str, tuple[RunRow, str]] = {}

    def clear(self) -> None:
        """Forget every kept row's cells (the columns changed); the search texts stay."""
        self._finished.clear()
        self._running.clear()

    def text(self, row: RunRow) -> str:
        """What ``/`` matches ``row`` on (:func:`searchable`), made once per state of the row."""
        kept = self._texts.get(row.run_id)
        if kept is None or (kept[0] is not row and kept[0] != row):
            kept = self._texts[row.run_id] = (row, searchable(row))
        return kept[1]

    def of(
        self, row: RunRow, now: dt.datetime, columns: tuple[FittedColumn, ...]
    ) -> tuple[object, ...]:
        """The cells of ``row`` in ``columns``; a running run's are built anew (its time ticks).

        A running run's cells that read as before are the objects shown before: the table
        renders a cell again only when its object changed, so an idle second redraws the time
        cell alone, not all of the row's (most of the runs list's idle cost).
        """
        if row.status is RunStatus.RUNNING:
            fresh = run_cells(row, now, columns)
            last = self._running.get(row.run_id)
            if last is not None and len(last) == len(fresh):
                fresh = tuple(
                    old if _same_cell(old, new) else new
                    for old, new in zip(last, fresh, strict=True)
                )
            self._running[row.run_id] = fresh
            return fresh
        self._running.pop(row.run_id, None)
        kept = self._finished.get(row.run_id)
        # The client hands back the same row object for a run whose state did not change.
        if kept is None or (kept[0] is not row and kept[0] != row):
            kept = self._finished[row.run_id] = (row, run_cells(row, now, columns))
        return kept[1]


def _same_cell(old: object, new: object) -> bool:
    """Whether two cells draw the same: text, base style and styled spans (or equal values)."""
    if isinstance(old, Text) and isinstance(new, Text):
        return old.plain == new.plain and old.style == new.style and old.spans == new.spans
    return type(old) is type(new) and old == new
