"""The step event log read back: cache lookups, a run's history, function-step records.

Every query names its rows by an index (``steps_by_spec``, ``steps_by_status``,
``steps_by_name``, ``steps_by_run``) and answers empty when there is no database yet. "Newest"
is the latest ``timestamp``; events of the same instant are ordered as they were recorded.
"""

from __future__ import annotations

import json
from collections.abc import Collection

from stemma.core.execution_records import StepEvent
from stemma.core.records import StepRecord, StepStatus
from stemma.core.store.record_rows import event_from_row
from stemma.core.store.sqlite.connections import Connections
from stemma.core.store.sqlite.event_rows import step_record, value_artifact_id
from stemma.core.store.sqlite.execution_rows import SQLITE_ROWS
from stemma.core.store.sqlite.schema import STEP_COLUMNS

_SELECT = f"SELECT {', '.join(STEP_COLUMNS)} FROM steps"
_COMPLETED = StepStatus.COMPLETED.value


def latest_step(
    connections: Connections, step_spec_id: str, statuses: Collection[StepStatus]
) -> StepEvent | None:
    """The newest event of fingerprint ``step_spec_id`` whose status is one of ``statuses``."""
    if not statuses:
        return None
    wanted = json.dumps(sorted({StepStatus(status).value for status in statuses}))
    rows = connections.query(
        f"{_SELECT} WHERE step_spec_id = ? AND status IN (SELECT value FROM json_each(?)) "
        "ORDER BY timestamp DESC, seq DESC LIMIT 1",
        (step_spec_id, wanted),
    )
    return event_from_row(rows[0], SQLITE_ROWS) if rows else None


def completed_steps(connections: Connections) -> dict[str, StepEvent]:
    """The newest ``completed`` event of every step fingerprint, in one query."""
    rows = connections.query(
        f"SELECT {', '.join(STEP_COLUMNS)} FROM ("
        f"SELECT *, row_number() OVER (PARTITION BY step_spec_id "
        f"ORDER BY timestamp DESC, seq DESC) AS newest FROM steps WHERE status = ?"
        ") WHERE newest = 1",
        (_COMPLETED,),
    )
    return {row["step_spec_id"]: event_from_row(row, SQLITE_ROWS) for row in rows}


def step_events(connections: Connections, pipeline_run_id: str | None = None) -> list[StepEvent]:
    """Every step event of one run (all runs when omitted), oldest first."""
    if pipeline_run_id is None:
        rows = connections.query(f"{_SELECT} ORDER BY timestamp, seq")
    else:
        rows = connections.query(
            f"{_SELECT} WHERE pipeline_run_id = ? ORDER BY timestamp, seq", (pipeline_run_id,)
        )
    return [event_from_row(row, SQLITE_ROWS) for row in rows]


def completed_records(
    connections: Connections, fingerprints: Collection[str]
) -> dict[str, StepRecord]:
    """The latest ``completed`` record of each fingerprint in ``fingerprints`` that has one.

    Output path and output artifact come from the event's metadata, the value from the metric
    artifact its ``value_artifact_id`` names.
    """
    if not fingerprints:
        return {}
    rows = connections.query(
        f"SELECT {', '.join(STEP_COLUMNS)} FROM ("
        f"SELECT *, row_number() OVER (PARTITION BY step_spec_id "
        f"ORDER BY timestamp DESC, seq DESC) AS newest FROM steps "
        f"WHERE status = ? AND step_spec_id IN (SELECT value FROM json_each(?))"
        ") WHERE newest = 1",
        (_COMPLETED, json.dumps(sorted(set(fingerprints)))),
    )
    values = _values(connections, [i for row in rows if (i := value_artifact_id(row))])
    return {row["step_spec_id"]: step_record(row, values) for row in rows}


def latest_completed_by_name(connections: Connections, name: str) -> StepRecord | None:
    """The most recent ``completed`` record of a step called ``name``, any fingerprint."""
    rows = connections.query(
        f"{_SELECT} WHERE step_name = ? AND status = ? ORDER BY timestamp DESC, seq DESC LIMIT 1",
        (name, _COMPLETED),
    )
    if not rows:
        return None
    value_id = value_artifact_id(rows[0])
    return step_record(rows[0], _values(connections, [value_id] if value_id else []))


def _values(connections: Connections, artifact_ids: list[str]) -> dict[str, str]:
    """The content of these metric artifacts, as text (their canonical JSON)."""
    if not artifact_ids:
        return {}
    rows = connections.query(
        "SELECT artifact_id, content FROM artifacts "
        "WHERE artifact_id IN (SELECT value FROM json_each(?)) "
        "AND artifact_type = 'metric' AND content IS NOT NULL",
        (json.dumps(sorted(set(artifact_ids))),),
    )
    return {row["artifact_id"]: bytes(row["content"]).decode() for row in rows}
