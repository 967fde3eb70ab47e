"""Execution records to the rows a bundle stages, and rows read back to records: no I/O.

A worker turns its :class:`ExecutionRecord` s into plain rows (lists of JSON values, in the
column order of :mod:`~stemma.core.store.sqlite.schema`) when it stages them, so the
orchestrator's commit only decodes JSON and inserts: the work per artifact is done in the
workers, in parallel, as with the Delta store's staged Parquet. Artifact content travels as
base64 text in the bundle and is a BLOB in the database.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from stemma.core.canonical import dumps_plain
from stemma.core.errors import ArtifactTypeError
from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.record_rows import RowFormat, json_object

if TYPE_CHECKING:  # annotations only: staging must not load the operations (pydantic)
    from stemma.core.operations.drafts import FinalizedArtifact

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROSECOND = dt.timedelta(microseconds=1)

EXECUTIONS = "executions"
ARTIFACTS = "artifacts"
ARTIFACT_EDGES = "artifact_edges"
EXECUTION_ROLES = "execution_roles"
STAGED_TABLES: tuple[str, ...] = (ARTIFACTS, ARTIFACT_EDGES, EXECUTION_ROLES, EXECUTIONS)
"""The tables a bundle stages rows for, in the order a commit inserts them."""
CONTENT_COLUMN = 2
"""Where ``content`` sits in an artifact row (base64 text staged, bytes committed)."""


def to_micros(value: dt.datetime) -> int:
    """Whole microseconds since the epoch, UTC; a naive time is taken to be UTC already."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    return (aware - EPOCH) // _MICROSECOND


def from_micros(value: int) -> dt.datetime:
    """The UTC time ``value`` microseconds after the epoch."""
    return EPOCH + dt.timedelta(microseconds=value)


def staged_rows(records: Sequence[ExecutionRecord]) -> dict[str, list[list[Any]]]:
    """Every row these units add, per table (see :data:`STAGED_TABLES`).

    Raises:
        ArtifactTypeError: an artifact's fields or metadata are not plain JSON data.
    """
    rows: dict[str, list[list[Any]]] = {name: [] for name in STAGED_TABLES}
    for record in records:
        rows[EXECUTIONS].append(execution_row(record))
        created = to_micros(record.ended_at)
        types: dict[str, str] = {}
        for artifact in record.artifacts:
            types[artifact.artifact_id] = artifact.artifact_type
            rows[ARTIFACTS].append(_artifact_row(artifact, record, created))
        for edge in record.edges:
            rows[ARTIFACT_EDGES].append(
                [
                    record.execution_run_id,
                    edge.source_artifact_id,
                    edge.target_artifact_id,
                    edge.source_artifact_type or types.get(edge.source_artifact_id),
                    edge.target_artifact_type or types.get(edge.target_artifact_id),
                    edge.source_role,
                    edge.target_role,
                    edge.group_id,
                    edge.step_boundary,
                ]
            )
        for direction, by_role in (("input", record.inputs), ("output", record.outputs)):
            rows[EXECUTION_ROLES].extend(
                [record.execution_run_id, direction, role, dumps_plain(list(artifact_ids))]
                for role, artifact_ids in by_role.items()
                if artifact_ids
            )
    return rows


def execution_row(record: ExecutionRecord) -> list[Any]:
    """The ``executions`` row of one unit."""
    return [
        record.execution_run_id,
        record.execution_spec_id,
        record.step_run_id,
        record.step_spec_id,
        record.step_name,
        record.step_number,
        record.operation,
        record.version,
        dumps_plain(dict(record.params)),
        dumps_plain(dict(record.overrides)),
        to_micros(record.started_at),
        to_micros(record.ended_at),
        record.worker,
        record.backend,
        record.success,
        record.error,
        record.tool_output,
        record.worker_log,
        dumps_plain(dict(record.provenance)) if record.provenance else None,
        dumps_plain(dict(record.metadata)),
    ]


def _artifact_row(artifact: FinalizedArtifact, record: ExecutionRecord, created: int) -> list[Any]:
    where = f"{artifact.artifact_type} artifact {artifact.original_name!r} of {record.step_name}"
    try:
        fields = dumps_plain(dict(artifact.fields))
        metadata = dumps_plain(dict(artifact.metadata))
    except (TypeError, ValueError) as err:
        raise ArtifactTypeError(f"{where}: fields and metadata must be JSON data ({err})") from err
    content = artifact.content
    return [
        artifact.artifact_id,
        artifact.artifact_type,
        None if content is None else base64.b64encode(content).decode("ascii"),
        artifact.original_name,
        artifact.extension,
        artifact.size,
        artifact.origin_step if artifact.origin_step is not None else record.step_number,
        record.step_name,
        metadata,
        fields,
        record.step_run_id,
        record.step_number,
        created,
    ]


def decode_content(row: list[Any]) -> list[Any]:
    """A staged artifact row with its content decoded from base64 (in place).

    Raises:
        ValueError: the content is not base64 text.
    """
    content = row[CONTENT_COLUMN]
    if content is not None:
        row[CONTENT_COLUMN] = base64.b64decode(cast(str, content), validate=True)
    return row


def artifact_from_row(row: Mapping[str, Any]) -> FinalizedArtifact:
    """The :class:`FinalizedArtifact` an ``artifacts`` row holds, content included."""
    from stemma.core.operations.drafts import FinalizedArtifact

    content = cast(bytes | None, row["content"])
    size = cast(int | None, row["size"])
    return FinalizedArtifact(
        artifact_id=row["artifact_id"],
        artifact_type=row["artifact_type"],
        content=content,
        original_name=row["original_name"] or "artifact",
        extension=row["extension"] or "",
        size=size if size is not None else len(content or b""),
        fields=json_object(row["fields"]),
        metadata=json_object(row["metadata"]),
        origin_step=row["artifact_step"],
    )


def json_strings(text: str | None) -> list[str]:
    """A JSON list-of-strings column read back (``[]`` when empty)."""
    return [str(item) for item in cast(list[Any], json.loads(text))] if text else []


SQLITE_ROWS = RowFormat(time=from_micros, strings=json_strings)
"""How this store's rows hold times (microseconds) and lists (JSON text)."""
