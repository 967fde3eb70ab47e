"""The run screen's steps table: which columns fit, and which steps a status filter keeps.

Pure, no Textual. The step names come first: a tree label (indent and name) gets all the room
it needs before the progress bar or the SLURM jobs column are shown; only when even the count
columns leave too little do names lose their leading dotted parts (``└ …transform``).
"""

from __future__ import annotations

from collections.abc import Sequence

from stemma.core.live import StepState
from stemma.tui.client.step_tree import TreeRow, tree_label
from stemma.tui.widgets.column_fit import (
    CELL_PADDING,
    SCROLLBAR,
    ColumnSpec,
    FittedColumn,
    fit_columns,
)

NAME_LEAST = 12
"""Below this the names are not worth reading; the table scrolls sideways instead."""
NAME_MOST = 23
"""The step column is at least this wide when the terminal has room (it then does not jump
as steps with longer names appear); it grows past it only for a longer name."""
_COUNTS = (
    ColumnSpec(key="status", title="status", least=9),
    ColumnSpec(key="progress", title="progress", least=8, priority=1),
    ColumnSpec(key="done", title="done", least=7),
    ColumnSpec(key="hit", title="hit", least=3),
    ColumnSpec(key="fail", title="fail", least=4),
    ColumnSpec(key="cncl", title="cncl", least=4),
    ColumnSpec(key="run", title="run", least=3),
    ColumnSpec(key="time", title="time", least=6),
)
"""The counts are those of ``stemma.core.unit_counts``: done (succeeded, failed or cancelled)
of total, hit (cached, part of succeeded), fail, cncl (cancelled) and run (running)."""
_JOBS = ColumnSpec(key="jobs", title="jobs", least=12, priority=2)
"""The SLURM job states, once a step has jobs."""
_NUMBER = ColumnSpec(key="#", title="#", least=2)

STEP_FILTERS = ("all", "running", "failed", "completed", "cancelled", "pending", "skipped")
"""What ``f`` cycles through on the run screen (``x``, ``r`` and ``a`` jump to failed,
running and all)."""


def step_columns(width: int, rows: Sequence[TreeRow]) -> tuple[FittedColumn, ...]:
    """The steps table's columns for a terminal ``width`` wide, showing ``rows``."""
    longest = max((len(tree_label(row)) for row in rows), default=0)
    required = [_NUMBER, *(spec for spec in _COUNTS if spec.priority == 0)]
    left = width - SCROLLBAR - sum(spec.least + CELL_PADDING for spec in required)
    name_least = max(NAME_LEAST, min(longest, left - CELL_PADDING))
    name = ColumnSpec(
        key="step", title="step", least=name_least, most=max(longest, NAME_MOST, name_least)
    )
    jobs = any(row.step.jobs for row in rows)
    specs = (_NUMBER, name, *_COUNTS, *((_JOBS,) if jobs else ()))
    return fit_columns(width, specs, grow=("step",))


def step_matches(step: StepState, status: str) -> bool:
    """Whether the status filter ``status`` keeps ``step``.

    ``failed`` also keeps a completed step with failed units (the ``continue`` policy
    completes those): they are what someone looking for failures wants to open.
    """
    if status == "all":
        return True
    if status == "failed":
        return step.status == "failed" or step.failed > 0
    return step.status == status


def step_text(row: TreeRow) -> str:
    """What ``/`` matches a step on: its number, name, status, operation and jobs."""
    step = row.step
    jobs = " ".join(step.jobs)
    hit = " hit" if step.cache == "step" else ""
    return f"{step.number} {step.name} {step.status}{hit} {step.operation} {jobs}"
