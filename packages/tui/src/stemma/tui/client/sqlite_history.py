"""A SQLite root's history, for the step screen: a run's step events, a step run's executions.

The dashboard's history is the Delta steps table (:mod:`history`); a root whose store is the
SQLite one (``STEMMA_STORE=sqlite``, or stemma-storage not installed) has none, and keeps its
events and executions in ``{root}/core.sqlite`` instead. Read only: a read never creates the
database (:class:`~stemma.core.sqlite_store.connections.Connections`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stemma.core.execution_records import StepEvent
from stemma.core.sqlite_store.connections import Connections
from stemma.core.sqlite_store.execution_reads import step_outputs
from stemma.core.sqlite_store.execution_rows import from_micros
from stemma.core.sqlite_store.schema import DATABASE_FILE
from stemma.core.sqlite_store.step_reads import step_events


class SqliteHistory:
    """One SQLite root's events and executions, read when asked (no cache: SQLite is quick)."""

    def __init__(self, root: Path) -> None:
        """Read the database of ``root``."""
        self._connections = Connections(root / DATABASE_FILE)

    @staticmethod
    def present(root: Path) -> bool:
        """Whether ``root`` holds a SQLite store's database."""
        return (root / DATABASE_FILE).is_file()

    def run_events(self, run_id: str) -> list[StepEvent]:
        """The step events of one run, oldest first."""
        return step_events(self._connections, run_id)

    def named_events(self, name: str) -> list[StepEvent]:
        """Every event of the steps named ``name``, oldest first (what ``explain`` compares)."""
        return [event for event in step_events(self._connections) if event.step_name == name]

    def executions(self, step_run_id: str) -> list[dict[str, Any]]:
        """The execution rows of one step run, oldest first, times as UTC datetimes."""
        rows = self._connections.query(
            "SELECT * FROM executions WHERE step_run_id = ? ORDER BY started_at", (step_run_id,)
        )
        for row in rows:
            for column in ("started_at", "ended_at"):
                if isinstance(row[column], int):
                    row[column] = from_micros(row[column])
            row["success"] = bool(row["success"])
        return rows

    def outputs(self, step_run_id: str) -> dict[str, tuple[str, ...]]:
        """Per output role, the artifact ids the step run offers downstream."""
        return step_outputs(self._connections, [step_run_id]).get(step_run_id, {})
