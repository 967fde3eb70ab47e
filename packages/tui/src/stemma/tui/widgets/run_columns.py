"""The runs list's columns for a terminal's width, each run's cells, and what ``/`` matches.

No I/O: the runs screen lays these out and redraws them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from stemma.core.live import RunStatus
from stemma.core.runs.run_rows import RunRow
from stemma.tui.widgets.cells import duration_text, status_text, time_text
from stemma.tui.widgets.column_fit import ColumnSpec, FittedColumn, cut_middle, fit_columns
from stemma.tui.widgets.tables import plain

COLUMNS = (
    ColumnSpec(key="id", title="id", least=8),
    ColumnSpec(key="status", title="status", least=9),
    ColumnSpec(key="run", title="run", least=30, most=72),
    ColumnSpec(key="started", title="started", least=11),
    ColumnSpec(key="time", title="time", least=7),
    ColumnSpec(key="steps", title="steps", least=5, priority=3),
    ColumnSpec(key="user", title="user", least=8, most=12, priority=1),
    ColumnSpec(key="host", title="host", least=10, most=20, priority=2),
)
"""At 80 columns: the short id, status, the run (script and arguments, see
``RunRow.description``), start and time; wider terminals add who started the run, where, and
its steps, then give the run's arguments more room."""
GROW = ("run", "host", "user")


def run_columns(width: int) -> tuple[FittedColumn, ...]:
    """The runs list's columns on a terminal ``width`` columns wide."""
    return fit_columns(width, COLUMNS, grow=GROW)


def searchable(row: RunRow) -> str:
    """What ``/`` matches a run on: what its row shows, and its whole id and pipeline name."""
    return " ".join((row.run_id, row.status.value, row.description, row.user, row.host))


def sort_key(sort_by: str, now: dt.datetime) -> Callable[[RunRow], tuple[object, ...]]:
    """The key that orders runs by ``sort_by`` (``status``, ``name``, else longest first)."""

    def key(row: RunRow) -> tuple[object, ...]:
        if sort_by == "status":
            return (row.status is not RunStatus.RUNNING, row.status.value)
        if sort_by == "name":
            return (row.name,)
        return (-row.duration(now),)

    return key


def run_cells(
    row: RunRow, now: dt.datetime, columns: tuple[FittedColumn, ...]
) -> tuple[object, ...]:
    """The run's cells in ``columns``; its script and arguments cut in the middle to fit."""
    values: dict[str, object] = {
        "id": row.short_id,
        "status": status_text(row.status.value),
        "started": time_text(row.started),
        "time": duration_text(row.duration(now)),
        "steps": f"{row.steps_done}/{row.steps_total}",
        "user": row.user,
        "host": row.host,
    }
    return plain(
        *(
            cut_middle(row.description, column.width) if column.key == "run" else values[column.key]
            for column in columns
        )
    )
