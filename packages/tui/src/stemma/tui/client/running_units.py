"""Rows for the units a step runs where no sandbox shows them.

A lazy step's functions (and a unit whose sandbox is on a node's local disk) run without a
sandbox under the root, so only the live state's count says they run. Each such unit gets a
row of its own, so the Executions tab never says "0 executions" while units run.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from stemma.core.live import StepState
from stemma.tui.client.views import ExecutionRow

UNSEEN_ID = "(running {n})"
"""The key of an unseen running unit's row: it has no execution id to show yet."""


def unseen_running(step: StepState, rows: Sequence[ExecutionRow]) -> list[ExecutionRow]:
    """One row per unit the live state counts running beyond those ``rows`` list running."""
    listed = sum(1 for row in rows if row.stage == "running")
    started = dt.datetime.fromisoformat(step.started_at) if step.started_at else None
    now = dt.datetime.now(dt.UTC)
    return [
        ExecutionRow(
            execution_run_id=UNSEEN_ID.format(n=n + 1),
            success=None,
            started_at="",
            duration_s=(now - started).total_seconds() if started else None,
            worker="",
            error="",
            failure_log=None,
            worker_log="",
            stage="running",
        )
        for n in range(max(0, step.running - listed))
    ]
