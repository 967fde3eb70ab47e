"""The step screen's executions table: its columns, a row's cells, which rows show, the summary.

A row is a committed execution, or a live one (running now, or finished and staged until its
step commits at its end): the ``stored`` column says which, so a unit never looks committed
before it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from stemma.core.runs.error_lines import error_line
from stemma.tui.client import ExecutionRow, StepView
from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.cells import duration_text, status_text
from stemma.tui.wording import noun_for

COLUMNS: tuple[tuple[str, int], ...] = (
    ("state", 7),
    ("stored", 9),
    ("started", 8),
    ("time", 5),
    ("worker", 12),
    ("error", 25),
)
"""Label and width: they fit 80 columns with the scrollbar."""


def state_word(execution: ExecutionRow) -> str:
    """``running``, ``ok`` or ``failed``."""
    if execution.success is None:
        return "running"
    return "ok" if execution.success else "failed"


def execution_cells(execution: ExecutionRow) -> tuple[Text | str, ...]:
    """The cells of one row, in :data:`COLUMNS` order."""
    return (
        status_text(state_word(execution)),
        execution.stage,
        execution.started_at,
        duration_text(execution.duration_s),
        execution.worker[:12],
        error_line(execution.error, 80),  # the exception, not "Traceback …"
    )


def execution_text(execution: ExecutionRow) -> str:
    """What ``/`` matches a row on: its cells, its whole id and its whole error."""
    return " ".join(
        (
            state_word(execution),
            execution.stage,
            execution.started_at,
            execution.worker,
            execution.execution_run_id,
            execution.error,
        )
    )


def shown_executions(
    rows: Sequence[ExecutionRow],
    *,
    failures_only: bool,
    running_only: bool,
    row_filter: RowFilter,
) -> list[ExecutionRow]:
    """The rows to draw: running first, then failures (what one comes for), then the rest."""
    kept = [
        e
        for e in rows
        if (not failures_only or e.success is False) and (not running_only or e.success is None)
    ]
    kept = row_filter.select(kept, execution_text)
    return sorted(kept, key=lambda e: (e.success is not None, e.success is True))


def executions_summary(
    view: StepView, shown: int, *, failures_only: bool, running_only: bool, row_filter: RowFilter
) -> str:
    """The facts line: ``name (op) · status · N executions (2 running, 3 staged), 1 failed``.

    ``(op)`` only when the operation differs from the name; ``1 execution`` for one.

    With a filter or a status key on: ``N of M executions · failed only · filter: … · 1 failed``.
    """
    rows = view.executions
    total = len(rows)
    failed = sum(1 for e in rows if e.success is False)
    running = max(view.running_units, sum(1 for e in rows if e.stage == "running"))
    staged = sum(1 for e in rows if e.stage == "staged")
    live = [f"{running} running"] if running else []
    live += [f"{staged} staged"] if staged else []  # finished; committed when the step ends
    executions = noun_for(total, "execution") + (f" ({', '.join(live)})" if live else "")
    narrowed = [
        *(["failed only"] if failures_only else []),
        *(["running only"] if running_only else []),
        *([row_filter.describe()] if row_filter.active else []),
    ]
    if narrowed:
        count = " · ".join([f"{shown} of {total} {executions}", *narrowed, f"{failed} failed"])
    else:
        count = f"{total} {executions}, {failed} failed"
    # The operation only when it says more than the name (a step is named after it by default).
    named = view.name if view.operation == view.name else f"{view.name} ({view.operation})"
    return f"{named} · {view.status} · {count}"
