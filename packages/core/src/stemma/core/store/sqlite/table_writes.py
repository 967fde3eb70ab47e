"""The inserts of a commit, run inside its one transaction: rows, markers, types, outputs.

Every function here takes the connection of an open write transaction and leaves committing
to its caller (:mod:`~stemma.core.store.sqlite.wave_commit`), so a wave lands whole or not at
all. Artifacts are inserted ``OR IGNORE`` on their id: a second copy of an artifact, in the same
wave or an earlier one, adds nothing, as the Delta store's deduplication by id.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from itertools import pairwise
from typing import Any

from stemma.core.canonical import dumps_plain
from stemma.core.execution_records import StepOutputs
from stemma.core.identity import hash_encoded
from stemma.core.store.sqlite.execution_rows import (
    ARTIFACT_EDGES,
    ARTIFACTS,
    EXECUTION_ROLES,
    EXECUTIONS,
)
from stemma.core.store.sqlite.schema import (
    ARTIFACT_COLUMNS,
    ARTIFACT_EDGE_COLUMNS,
    EXECUTION_COLUMNS,
    EXECUTION_ROLE_COLUMNS,
    STEP_OUTPUT_COLUMNS,
    insert_sql,
)

_INSERTS = {
    ARTIFACTS: insert_sql("artifacts", ARTIFACT_COLUMNS, or_ignore=True),
    ARTIFACT_EDGES: insert_sql("artifact_edges", ARTIFACT_EDGE_COLUMNS),
    EXECUTION_ROLES: insert_sql("execution_roles", EXECUTION_ROLE_COLUMNS),
    EXECUTIONS: insert_sql("executions", EXECUTION_COLUMNS, or_ignore=True),
}
_WORKER_LOG = EXECUTION_COLUMNS.index("worker_log")
_EXECUTION_RUN_ID = EXECUTION_COLUMNS.index("execution_run_id")


def already_committed(connection: sqlite3.Connection, names: Collection[str]) -> set[str]:
    """The bundle names among ``names`` that a commit already wrote."""
    if not names:
        return set()
    found = connection.execute(
        "SELECT bundle FROM committed_bundles WHERE bundle IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(names)),),
    )
    return {str(name) for (name,) in found}


def insert_bundle(
    connection: sqlite3.Connection,
    rows: Mapping[str, list[list[Any]]],
    worker_logs: Mapping[str, str],
) -> None:
    """Insert one bundle's rows, its executions' empty worker logs filled from ``worker_logs``."""
    if worker_logs:
        for row in rows[EXECUTIONS]:
            if row[_WORKER_LOG] is None:
                row[_WORKER_LOG] = worker_logs.get(row[_EXECUTION_RUN_ID])
    for table, sql in _INSERTS.items():
        if rows[table]:
            connection.executemany(sql, rows[table])


def mark_committed(
    connection: sqlite3.Connection, bundles: Sequence[tuple[str, str]], now: int
) -> None:
    """Record ``(bundle name, step dir)`` pairs as committed at ``now`` (microseconds)."""
    connection.executemany(
        "INSERT INTO committed_bundles (bundle, step_dir, committed_at) VALUES (?, ?, ?)",
        [(name, step_dir, now) for name, step_dir in bundles],
    )


def edge_mark(connection: sqlite3.Connection) -> int:
    """The highest edge rowid so far: edges inserted after this call have greater ones."""
    (highest,) = connection.execute("SELECT ifnull(max(rowid), 0) FROM artifact_edges").fetchone()
    return int(highest)


def fill_edge_types(connection: sqlite3.Connection, after: int) -> None:
    """Fill the unknown artifact types of the edges inserted after rowid ``after``.

    From the artifacts table, which by now holds this wave's artifacts too: the Delta commit
    fills them from the wave's index and the table's.
    """
    for side in ("source", "target"):
        connection.execute(
            f"UPDATE artifact_edges SET {side}_artifact_type = "
            f"(SELECT artifact_type FROM artifacts WHERE artifact_id = {side}_artifact_id) "
            f"WHERE rowid > ? AND {side}_artifact_type IS NULL",
            (after,),
        )


def insert_step_outputs(
    connection: sqlite3.Connection, outputs: StepOutputs, *, committed_only: bool
) -> None:
    """Insert a step run's outputs, one row per role (a role with no artifacts included).

    The same ids inserted again for the same role of the same step run (a wave committed twice)
    add nothing; other ids add to them, as readers take each role's set.

    Args:
        connection: inside the wave's transaction.
        outputs: the step run's artifacts per role.
        committed_only: leave out artifacts the store does not hold (some bundles of the wave
            were left out); a role left with none keeps its row, empty.
    """
    by_role: dict[str, Sequence[str]] = {}
    for role, artifact_ids in outputs.outputs.items():
        ordered = all(a < b for a, b in pairwise(artifact_ids))
        by_role[role] = artifact_ids if ordered else sorted(set(artifact_ids))
    if committed_only:
        present = _present(connection, {i for ids in by_role.values() for i in ids})
        by_role = {role: [i for i in ids if i in present] for role, ids in by_role.items()}
    rows: list[tuple[str, str, str, str]] = []
    for role, ids in by_role.items():
        text = dumps_plain(list(ids))
        rows.append((outputs.step_run_id, role, text, hash_encoded(text)))
    connection.executemany(insert_sql("step_outputs", STEP_OUTPUT_COLUMNS, or_ignore=True), rows)


def _present(connection: sqlite3.Connection, artifact_ids: Collection[str]) -> set[str]:
    found = connection.execute(
        "SELECT artifact_id FROM artifacts WHERE artifact_id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(artifact_ids)),),
    )
    return {str(artifact_id) for (artifact_id,) in found}
