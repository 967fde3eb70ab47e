"""The Pipeline's lookups of executions, step outputs and artifacts: one query per batch.

Each function answers for many keys at once (a whole step's execution keys, every input of a
pack of units), passing the keys as one JSON array (``IN (SELECT value FROM json_each(?))``)
rather than one placeholder each, so a batch of any size is one statement using the tables'
indexes. No database yet means no rows.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, cast

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.record_rows import execution_from_row
from stemma.core.store.sqlite.connections import Connections
from stemma.core.store.sqlite.execution_rows import SQLITE_ROWS, artifact_from_row
from stemma.core.store.sqlite.schema import ARTIFACT_COLUMNS, EXECUTION_COLUMNS

if TYPE_CHECKING:  # annotations only: reading must not load the operations (pydantic)
    from stemma.core.operations.drafts import FinalizedArtifact

_IN = "IN (SELECT value FROM json_each(?))"


def _keys(values: Collection[str]) -> str:
    return json.dumps(sorted(set(values)))


def step_outputs(
    connections: Connections, step_run_ids: Collection[str]
) -> dict[str, dict[str, tuple[str, ...]]]:
    """Per step run that recorded outputs, per role, its sorted artifact ids (maybe none)."""
    if not step_run_ids:
        return {}
    rows = connections.query(
        f"SELECT step_run_id, role, artifact_ids FROM step_outputs WHERE step_run_id {_IN}",
        (_keys(step_run_ids),),
    )
    found: dict[str, dict[str, set[str]]] = {}
    for row in rows:
        ids = found.setdefault(row["step_run_id"], {}).setdefault(row["role"], set())
        ids.update(_ids(row["artifact_ids"]))
    return {
        run: {role: tuple(sorted(ids)) for role, ids in roles.items()}
        for run, roles in found.items()
    }


def executions_by_key(
    connections: Connections, keys: Collection[str]
) -> dict[str, ExecutionRecord]:
    """The newest successful execution of each key that has one, with its input/output ids.

    Newest is the latest ``ended_at``, ties going to the one committed last. An execution's ids
    per role keep their recorded order, each id once.
    """
    if not keys:
        return {}
    rows = connections.query(
        f"SELECT {', '.join(EXECUTION_COLUMNS)} FROM ("
        "SELECT *, row_number() OVER (PARTITION BY execution_spec_id "
        "ORDER BY ended_at DESC, rowid DESC) AS newest "
        f"FROM executions WHERE success AND execution_spec_id {_IN}"
        ") WHERE newest = 1",
        (_keys(keys),),
    )
    if not rows:
        return {}
    edges = connections.query(
        "SELECT execution_run_id, direction, role, artifact_ids FROM execution_roles "
        f"WHERE execution_run_id {_IN} ORDER BY rowid",
        (_keys([row["execution_run_id"] for row in rows]),),
    )
    by_run = _edges_by_run(edges)
    return {
        row["execution_spec_id"]: execution_from_row(
            row, by_run.get(row["execution_run_id"], {}), SQLITE_ROWS
        )
        for row in rows
    }


def _edges_by_run(
    edges: list[dict[str, Any]],
) -> dict[str, dict[str, dict[str, tuple[str, ...]]]]:
    by_run: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {}
    for edge in edges:
        roles = by_run.setdefault(edge["execution_run_id"], {}).setdefault(edge["direction"], {})
        # in recorded order, each id once (its first place)
        roles[edge["role"]] = tuple(dict.fromkeys(_ids(edge["artifact_ids"])))
    return by_run


def _ids(text: str) -> list[str]:
    return [str(artifact_id) for artifact_id in cast(list[Any], json.loads(text))]


def load_artifacts(
    connections: Connections, artifact_ids: Collection[str], *, content: bool = True
) -> dict[str, FinalizedArtifact]:
    """The artifacts found among ``artifact_ids``, in one query.

    With ``content=False`` the content is not read: NULL in its place, and a row without a
    recorded size gets its content's length (SQLite's ``length`` of a blob reads no content).
    """
    if not artifact_ids:
        return {}
    columns = ARTIFACT_COLUMNS if content else _DRY_COLUMNS
    rows = connections.query(
        f"SELECT {', '.join(columns)} FROM artifacts WHERE artifact_id {_IN}",
        (_keys(artifact_ids),),
    )
    return {row["artifact_id"]: artifact_from_row(row) for row in rows}


_DRY_COLUMNS = tuple(
    {
        "content": "NULL AS content",
        "size": "COALESCE(size, length(CAST(content AS BLOB))) AS size",
    }.get(column, column)
    for column in ARTIFACT_COLUMNS
)
"""``ARTIFACT_COLUMNS`` without the content (the same names, so rows read back alike)."""
