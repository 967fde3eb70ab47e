"""Importing what stemma-core's SQLite store recorded into the Delta tables, once.

A root built by stemma-core alone holds its history in ``{root}/core.sqlite``
(:class:`~stemma.core.store.sqlite.SqliteStore`). Once stemma-storage is installed the Delta
store takes over that root, and must not rebuild what is there: so the first ``recover()`` of a
:class:`~stemma.storage.DeltaStore` on such a root imports it, with :func:`import_core_records`:

1. under a lock, the SQLite store's own staged leftovers are committed first (a core process
   that died before its commit), so nothing core staged is lost to the Delta recovery, which
   would take those bundles for abandoned ones;
2. every table is read in one SQLite read transaction (one consistent snapshot), a chunk of rows
   at a time, and appended to its Delta tables in commit order (content and index, lineage,
   execution edges, step outputs, step events, executions last), each chunk as the Delta
   application transaction ``stemma-sqlite-import-{snapshot}-{chunk}``: an import interrupted
   half-way and run again skips the chunks a table already holds, and artifacts already in a
   table are not written twice;
3. a marker, ``delta/core-sqlite-import.json``, records the import; while it is there, the check
   costs two ``stat`` calls.

Artifacts of a user type not registered in this process cannot be given their content table;
they are left out, with a warning, and no marker is written, so the next ``recover()`` (with the
type registered) imports them. What core records in ``core.sqlite`` after the import is not
imported (stemma uses the Delta store from then on).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import polars as pl

from stemma.core.errors import ArtifactTypeError
from stemma.core.file_lock import FileLock
from stemma.core.identity import hash_plain
from stemma.core.store.history_source import SQLITE_IMPORT_MARKER
from stemma.core.store.locations import RootLayout
from stemma.core.store.record_rows import event_from_row, execution_from_row
from stemma.core.store.sqlite import SqliteStore
from stemma.core.store.sqlite import execution_rows as core_rows
from stemma.core.store.sqlite import schema as core_schema
from stemma.core.store.sqlite.execution_rows import SQLITE_ROWS
from stemma.core.store.sqlite.schema import SchemaVersionError
from stemma.storage.artifact_tables import content_row, table_for_type
from stemma.storage.errors import StorageError
from stemma.storage.execution_rows import event_row, execution_row
from stemma.storage.schemas import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    STEP_OUTPUTS,
    STEPS,
    TableSpec,
)
from stemma.storage.tables import append_rows
from stemma.storage.wave_chunks import commit_chunk_rows

log = logging.getLogger(__name__)

MARKER = SQLITE_IMPORT_MARKER
"""The file under ``{root}/delta`` recording that ``core.sqlite`` was imported (named in core:
every reader decides from it which store a root's history is in)."""
_TABLES = ("artifacts", "artifact_edges", "execution_roles", "step_outputs", "steps", "executions")
"""The SQLite tables imported, in the order their Delta tables are committed."""


def import_core_records(layout: RootLayout) -> int:
    """Import ``{root}/core.sqlite`` into the Delta tables unless that was done; rows read.

    Returns:
        How many SQLite rows this call imported (0 when there is nothing to import).

    Raises:
        CommitConflictError: a Delta table kept conflicting; the next call resumes the import.
        StorageError: ``core.sqlite`` cannot be read (damaged, or of a newer stemma-core).
    """
    database = layout.root / core_schema.DATABASE_FILE
    marker = layout.delta / MARKER
    if marker.is_file() or not database.is_file():
        return 0
    with FileLock(layout.locks / "delta" / "core-sqlite-import.lock"):
        if marker.is_file():
            return 0  # imported by another process while we waited
        try:
            staged = SqliteStore(layout.root).recover()
            snapshot, counts, unknown = _import(layout, database)
        except (sqlite3.Error, SchemaVersionError) as err:
            raise StorageError(
                f"cannot import {database}, what stemma-core recorded on this root, into the "
                f"Delta tables: {err}. Repair it (sqlite3 {database} '.recover'), or move it "
                "out of the root to use the Delta store without that history"
            ) from err
        if unknown:
            log.warning(
                "imported %s into the Delta tables except the artifacts of the unregistered "
                "type(s) %s: register them (stemma.core.operations.register_artifact_type) "
                "and the next recover() imports them",
                database,
                ", ".join(sorted(unknown)),
            )
            return sum(counts.values())
        _write_marker(marker, database, snapshot, counts, staged)
    log.info(
        "imported what stemma-core recorded in %s into the Delta tables under %s (%s); "
        "done once, recorded in %s",
        database,
        layout.delta,
        ", ".join(f"{count} {table}" for table, count in counts.items()),
        marker,
    )
    return sum(counts.values())


def _import(layout: RootLayout, database: Path) -> tuple[str, dict[str, int], set[str]]:
    """Append every SQLite table to its Delta tables; the snapshot id, rows read, unknown types."""
    counts: dict[str, int] = {}
    unknown: set[str] = set()
    with contextlib.closing(sqlite3.connect(database, isolation_level=None)) as connection:
        connection.execute("BEGIN")  # one snapshot for every read below
        try:
            (version,) = connection.execute("PRAGMA user_version").fetchone()
            if version != core_schema.SCHEMA_VERSION:
                raise SchemaVersionError(
                    f"its schema is version {version}; this stemma-storage imports version "
                    f"{core_schema.SCHEMA_VERSION} (install a matching stemma-storage)"
                )
            snapshot = _snapshot_id(connection)
            rows = commit_chunk_rows()
            for table in _TABLES:
                counts[table] = 0
                for number, chunk in enumerate(_chunks(connection, table, rows)):
                    transaction = f"stemma-sqlite-import-{snapshot}-{number}"
                    for spec, frame in _frames(table, chunk, unknown).items():
                        if not frame.is_empty():
                            append_rows(layout, spec, frame, app_id=transaction)
                    counts[table] += len(chunk)
        finally:
            connection.execute("ROLLBACK")
    return snapshot, counts, unknown


def _snapshot_id(connection: sqlite3.Connection) -> str:
    """What identifies this state of the database: each table's row count and last rowid."""
    found: list[Any] = []
    for table in _TABLES:
        found.append(
            list(
                connection.execute(
                    f"SELECT count(*), ifnull(max(rowid), 0) FROM {table}"
                ).fetchone()
            )
        )
    return hash_plain(found)


def _chunks(
    connection: sqlite3.Connection, table: str, size: int
) -> Iterator[list[dict[str, Any]]]:
    """The rows of ``table`` in the order they were written, ``size`` at a time."""
    columns = _COLUMNS[table]
    last = 0
    while True:
        found = connection.execute(
            f"SELECT rowid, {', '.join(columns)} FROM {table} "
            "WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (last, size),
        ).fetchall()
        if not found:
            return
        last = int(found[-1][0])
        yield [dict(zip(columns, row[1:], strict=True)) for row in found]


_COLUMNS: dict[str, tuple[str, ...]] = {
    "artifacts": core_schema.ARTIFACT_COLUMNS,
    "artifact_edges": core_schema.ARTIFACT_EDGE_COLUMNS,
    "execution_roles": core_schema.EXECUTION_ROLE_COLUMNS,
    "step_outputs": core_schema.STEP_OUTPUT_COLUMNS,
    "steps": core_schema.STEP_COLUMNS,
    "executions": core_schema.EXECUTION_COLUMNS,
}


def as_delta_frames(
    table: str, rows: list[dict[str, Any]], unknown: set[str]
) -> dict[TableSpec, pl.DataFrame]:
    """SQLite rows of ``table`` as the rows the import appends to its Delta tables.

    Also how the queries read a root whose ``core.sqlite`` is not imported yet, so both read
    the same rows.
    """
    return _frames(table, rows, unknown)


def _frames(
    table: str, rows: list[dict[str, Any]], unknown: set[str]
) -> dict[TableSpec, pl.DataFrame]:
    """One chunk of a SQLite table's rows as rows of its Delta tables, in commit order."""
    if table == "artifacts":
        return _artifact_frames(rows, unknown)
    if table == "steps":
        events = [event_from_row(row, SQLITE_ROWS) for row in rows]
        return {STEPS: STEPS.frame([event_row(event) for event in events])}
    if table == "executions":
        records = [execution_from_row(row, {}, SQLITE_ROWS) for row in rows]
        return {EXECUTIONS: EXECUTIONS.frame([execution_row(record) for record in records])}
    if table == "artifact_edges":
        edges = [{**row, "step_boundary": bool(row["step_boundary"])} for row in rows]
        return {ARTIFACT_EDGES: ARTIFACT_EDGES.frame(edges)}
    if table == "execution_roles":
        return {EXECUTION_EDGES: EXECUTION_EDGES.frame(_execution_edges(rows))}
    return {STEP_OUTPUTS: STEP_OUTPUTS.frame(_step_outputs(rows))}


def _execution_edges(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A row per id of each role (SQLite keeps a role's ids as one JSON array)."""
    return [
        {
            "execution_run_id": row["execution_run_id"],
            "direction": row["direction"],
            "role": row["role"],
            "artifact_id": artifact_id,
            "position": position,
        }
        for row in rows
        for position, artifact_id in enumerate(_ids(row["artifact_ids"]))
    ]


def _step_outputs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A row per id of each role, and one with a null id for a role with none."""
    found: list[dict[str, Any]] = []
    for row in rows:
        ids: list[str | None] = [*_ids(row["artifact_ids"])] or [None]
        found.extend(
            {"step_run_id": row["step_run_id"], "role": row["role"], "artifact_id": artifact_id}
            for artifact_id in ids
        )
    return found


def _ids(text: str) -> list[str]:
    return [str(artifact_id) for artifact_id in cast(list[Any], json.loads(text))]


def _artifact_frames(
    rows: list[dict[str, Any]], unknown: set[str]
) -> dict[TableSpec, pl.DataFrame]:
    """Content rows per type's table, then the index rows (content first, as a commit does)."""
    content: dict[TableSpec, list[dict[str, Any]]] = {}
    index: list[dict[str, Any]] = []
    for row in rows:
        artifact = core_rows.artifact_from_row(row)
        try:
            spec = table_for_type(artifact.artifact_type)
        except ArtifactTypeError:
            unknown.add(artifact.artifact_type)
            continue
        content.setdefault(spec, []).append(
            content_row(spec, artifact, row["origin_step_name"], row["origin_step"])
        )
        index.append(
            {
                "artifact_id": row["artifact_id"],
                "artifact_type": row["artifact_type"],
                "origin_step_run_id": row["origin_step_run_id"],
                "origin_step_name": row["origin_step_name"],
                "origin_step": row["origin_step"],
                "created_at": core_rows.from_micros(row["created_at"]),
                "metadata": row["metadata"],
            }
        )
    frames = {spec: spec.frame(found) for spec, found in sorted(content.items(), key=_by_name)}
    frames[ARTIFACT_INDEX] = ARTIFACT_INDEX.frame(index)
    return frames


def _by_name(item: tuple[TableSpec, Any]) -> str:
    return item[0].name


def _write_marker(
    marker: Path, database: Path, snapshot: str, counts: dict[str, int], staged: int
) -> None:
    record = {
        "database": str(database),
        "snapshot": snapshot,
        "rows": counts,
        "bundles_committed_first": staged,
        "imported_at": dt.datetime.now(dt.UTC).isoformat(),
    }
    marker.parent.mkdir(parents=True, exist_ok=True)
    temporary = marker.with_name(f".{marker.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(record, indent=2), encoding="utf-8")
    os.replace(temporary, marker)
