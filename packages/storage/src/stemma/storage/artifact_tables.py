"""Which content table holds each artifact type, and artifacts to and from its rows.

The four built-in types have their own tables (``artifacts/data``, ``artifacts/metrics``,
``artifacts/configs``, ``artifacts/file_refs``, declared in :mod:`stemma.storage.schemas`). A
user type registered with :func:`stemma.core.operations.specs.register_artifact_type` gets the
table it registered, built from its ``schema_fields`` by
:func:`~stemma.storage.schemas.user_content_table`: the common columns, binary content, then its
fields in name order.

Every content table has the same common columns (id, content, original name, extension, size,
origin step number and name, metadata JSON); the rest are the type's fields. Metric content is
JSON text in its table and bytes in a :class:`FinalizedArtifact`; file refs keep no content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from stemma.core.canonical import dumps_plain
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.operations.specs import COMMON_COLUMNS as CORE_COMMON_COLUMNS
from stemma.core.operations.specs import get_artifact_type
from stemma.storage.schemas import CONFIGS, DATA, FILE_REFS, METRICS, TableSpec, user_content_table

BUILTIN_TABLES: Mapping[str, TableSpec] = {
    "data": DATA,
    "metric": METRICS,
    "config": CONFIGS,
    "file_ref": FILE_REFS,
}
"""The content table of each built-in artifact type."""
COMMON_COLUMNS: frozenset[str] = frozenset(CORE_COMMON_COLUMNS)
"""Columns every content table has (file refs have no ``content``); the rest are type fields."""


def table_for_type(artifact_type: str) -> TableSpec:
    """The content table of ``artifact_type``.

    Raises:
        ArtifactTypeError: the type is neither built in nor registered in this process.
        ValueError: a user type registered one of stemma's own tables.
    """
    builtin = BUILTIN_TABLES.get(artifact_type)
    if builtin is not None:
        return builtin
    kind = get_artifact_type(artifact_type)
    fields = tuple(sorted((name, column.value) for name, column in kind.schema_fields.items()))
    return user_content_table(kind.table, fields)


def field_columns(spec: TableSpec) -> tuple[str, ...]:
    """The type's own columns of a content table, in declared order."""
    return tuple(column for column in spec.columns if column not in COMMON_COLUMNS)


def content_row(
    spec: TableSpec, artifact: FinalizedArtifact, step_name: str, step_number: int
) -> dict[str, Any]:
    """The row ``artifact`` adds to its content table ``spec``."""
    row: dict[str, Any] = {
        "artifact_id": artifact.artifact_id,
        "original_name": artifact.original_name,
        "extension": artifact.extension,
        "size": artifact.size,
        "origin_step": artifact.origin_step if artifact.origin_step is not None else step_number,
        "origin_step_name": step_name,
        "metadata": dumps_plain(dict(artifact.metadata)),
    }
    if "content" in spec.columns:
        content = artifact.content
        row["content"] = content.decode() if spec is METRICS and content is not None else content
    for column in field_columns(spec):
        value: Any = artifact.fields.get(column)
        row[column] = list(cast("list[Any]", value)) if isinstance(value, list | tuple) else value
    return row


def artifact_from_row(
    spec: TableSpec, artifact_type: str, row: Mapping[str, Any]
) -> FinalizedArtifact:
    """The :class:`FinalizedArtifact` one content-table row holds.

    Rows an older stemma wrote for a function step lack the pipeline-only columns; they read
    back with the file's name for a file ref and ``value.json`` for a metric.
    """
    content: Any = row.get("content")
    if isinstance(content, str):
        content = content.encode()
    fields = {column: row[column] for column in field_columns(spec)}
    if spec is FILE_REFS and fields.get("file_count") is None:
        fields.pop("file_count", None)
    name = cast(str | None, row["original_name"]) or _fallback_name(spec, fields)
    metadata = cast(str | None, row["metadata"])
    size = cast(int | None, row["size"])
    return FinalizedArtifact(
        artifact_id=row["artifact_id"],
        artifact_type=artifact_type,
        content=content,
        original_name=name,
        extension=cast(str | None, row["extension"]) or "",
        size=size if size is not None else len(content or b""),
        fields=fields,
        metadata=json.loads(metadata) if metadata else {},
        origin_step=cast(int | None, row["origin_step"]),
    )


def _fallback_name(spec: TableSpec, fields: Mapping[str, Any]) -> str:
    if spec is FILE_REFS and isinstance(path := fields.get("path"), str):
        return path.rstrip("/").rsplit("/", 1)[-1] or "output"
    return "value.json" if spec is METRICS else "artifact"
