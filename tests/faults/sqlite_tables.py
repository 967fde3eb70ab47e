"""A SQLite store's records (``core.sqlite``) as the Delta tables ``crash_tables`` compares.

The SQLite store keeps one ``artifacts`` table (content beside the index) and per-role JSON
arrays of artifact ids; this spreads them into the Delta tables' shapes, so one comparison
serves both stores. Each artifact type becomes an ``artifacts/{type}`` content table.
"""

from __future__ import annotations

import json
import pathlib
import sqlite3
from typing import Any

import polars as pl

from tests.faults.crash_tables import (
    ARTIFACT_EDGES,
    EXECUTION_EDGES,
    EXECUTIONS,
    INDEX,
    STEP_OUTPUTS,
    STEPS,
)

DATABASE = "core.sqlite"


def sqlite_tables(root: pathlib.Path) -> dict[str, pl.DataFrame]:
    """The store's records under ``root``, by the Delta table each would be in."""
    path = root / DATABASE
    if not path.is_file():
        return {}
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:

        def rows(sql: str) -> list[tuple[Any, ...]]:
            return connection.execute(sql).fetchall()

        artifacts = rows("SELECT artifact_id, artifact_type FROM artifacts")
        edges = rows(
            "SELECT execution_run_id, source_artifact_id, target_artifact_id, source_role, "
            "target_role FROM artifact_edges"
        )
        roles = rows("SELECT execution_run_id, direction, role, artifact_ids FROM execution_roles")
        outputs = rows("SELECT step_run_id, role, artifact_ids FROM step_outputs")
        tables = {
            INDEX: _frame(["artifact_id", "artifact_type"], artifacts),
            EXECUTIONS: _frame(
                ["execution_run_id", "execution_spec_id", "success"],
                [
                    (run, key, bool(ok))
                    for run, key, ok in rows(
                        "SELECT execution_run_id, execution_spec_id, success FROM executions"
                    )
                ],
            ),
            STEPS: _frame(["step_run_id", "status"], rows("SELECT step_run_id, status FROM steps")),
            ARTIFACT_EDGES: _frame(
                [
                    "execution_run_id",
                    "source_artifact_id",
                    "target_artifact_id",
                    "source_role",
                    "target_role",
                ],
                edges,
            ),
            EXECUTION_EDGES: _frame(
                ["execution_run_id", "direction", "role", "artifact_id"],
                [(run, way, role, i) for run, way, role, ids in roles for i in json.loads(ids)],
            ),
            STEP_OUTPUTS: _frame(
                ["step_run_id", "role", "artifact_id"],
                [(run, role, i) for run, role, ids in outputs for i in json.loads(ids) or [None]],
            ),
        }
    finally:
        connection.close()
    for kind in sorted({kind for _, kind in artifacts}):
        ids = [(i,) for i, of in artifacts if of == kind]
        tables[f"artifacts/{kind}"] = _frame(["artifact_id"], ids)
    return tables


def _frame(columns: list[str], rows: list[tuple[Any, ...]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=columns, orient="row")
