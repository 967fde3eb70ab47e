"""The SQLite schema of ``{root}/core.sqlite``: every table's columns, declared once.

The tables mirror the Delta tables of stemma-storage (the same columns under the same names), so
that what core recorded can be imported into Delta without interpretation. Three choices differ,
because SQLite has neither lists nor time zones nor one table per artifact type:

- one ``artifacts`` table holds every artifact (the Delta index and content tables in one),
  its type's own columns as canonical JSON in ``fields``;
- lists (``dep_fingerprints``, ``output_roles``) are JSON arrays in text columns;
- times are whole microseconds since the Unix epoch, UTC (they sort as numbers);
- which artifacts an execution consumed and produced, and what a step run offers downstream,
  are one row per role holding the ids as a JSON array (``execution_roles``, ``step_outputs``),
  not one row per id: a step offering 10^5 artifacts writes one row, not 10^5.

``committed_bundles`` records every bundle a commit wrote, keyed by its name (the first
execution run id it holds): committing it again finds it there and adds nothing.
A step run's outputs carry the digest of their ids, which does the same for them.
"""

from __future__ import annotations

import sqlite3

DATABASE_FILE = "core.sqlite"
"""The database's name under the store root."""
SCHEMA_VERSION = 1
"""Kept in ``PRAGMA user_version``; a database of a newer version is refused."""

STEP_COLUMNS: tuple[str, ...] = (
    "step_run_id",
    "step_spec_id",
    "pipeline_run_id",
    "step_number",
    "step_name",
    "status",
    "operation",
    "version",
    "params",
    "dep_fingerprints",
    "backend",
    "output_roles",
    "total_count",
    "succeeded_count",
    "failed_count",
    "timestamp",
    "duration_seconds",
    "error",
    "dispatch_error",
    "commit_error",
    "metadata",
)
"""The steps event log, one row per event; ``seq`` (the rowid) keeps their order of arrival."""
EXECUTION_COLUMNS: tuple[str, ...] = (
    "execution_run_id",
    "execution_spec_id",
    "step_run_id",
    "step_spec_id",
    "step_name",
    "step_number",
    "operation",
    "version",
    "params",
    "overrides",
    "started_at",
    "ended_at",
    "worker",
    "backend",
    "success",
    "error",
    "tool_output",
    "worker_log",
    "provenance",
    "metadata",
)
"""One row per execution unit attempt."""
ARTIFACT_COLUMNS: tuple[str, ...] = (
    "artifact_id",
    "artifact_type",
    "content",
    "original_name",
    "extension",
    "size",
    "artifact_step",
    "origin_step_name",
    "metadata",
    "fields",
    "origin_step_run_id",
    "origin_step",
    "created_at",
)
"""One row per artifact, first writer wins. ``artifact_step`` is the step number the artifact
carries (its draft's, else its producing step's); ``origin_step`` the producing step's."""
ARTIFACT_EDGE_COLUMNS: tuple[str, ...] = (
    "execution_run_id",
    "source_artifact_id",
    "target_artifact_id",
    "source_artifact_type",
    "target_artifact_type",
    "source_role",
    "target_role",
    "group_id",
    "step_boundary",
)
"""Lineage: this input artifact produced that output artifact."""
EXECUTION_ROLE_COLUMNS: tuple[str, ...] = ("execution_run_id", "direction", "role", "artifact_ids")
"""Which artifacts an execution consumed (``input``) and produced (``output``): per role, their
ids in order as a JSON array; a role with none has no row."""
STEP_OUTPUT_COLUMNS: tuple[str, ...] = ("step_run_id", "role", "artifact_ids", "digest")
"""What a step run offers downstream: per role, its sorted ids as a JSON array (``[]`` for a
role with none) and that text's xxh3_128, which makes writing the same outputs twice a no-op."""

_DDL = """
CREATE TABLE IF NOT EXISTS steps (
    seq INTEGER PRIMARY KEY,
    step_run_id TEXT NOT NULL, step_spec_id TEXT NOT NULL, pipeline_run_id TEXT NOT NULL,
    step_number INTEGER NOT NULL, step_name TEXT NOT NULL, status TEXT NOT NULL,
    operation TEXT, version TEXT, params TEXT, dep_fingerprints TEXT, backend TEXT,
    output_roles TEXT, total_count INTEGER, succeeded_count INTEGER, failed_count INTEGER,
    timestamp INTEGER NOT NULL, duration_seconds REAL, error TEXT, dispatch_error TEXT,
    commit_error TEXT, metadata TEXT
);
CREATE INDEX IF NOT EXISTS steps_by_spec ON steps (step_spec_id, status, timestamp);
CREATE INDEX IF NOT EXISTS steps_by_status ON steps (status, timestamp);
CREATE INDEX IF NOT EXISTS steps_by_name ON steps (step_name, status, timestamp);
CREATE INDEX IF NOT EXISTS steps_by_run ON steps (pipeline_run_id, timestamp);
CREATE TABLE IF NOT EXISTS executions (
    execution_run_id TEXT PRIMARY KEY, execution_spec_id TEXT NOT NULL,
    step_run_id TEXT NOT NULL, step_spec_id TEXT NOT NULL, step_name TEXT NOT NULL,
    step_number INTEGER NOT NULL, operation TEXT, version TEXT, params TEXT, overrides TEXT,
    started_at INTEGER, ended_at INTEGER, worker TEXT, backend TEXT,
    success INTEGER NOT NULL, error TEXT, tool_output TEXT, worker_log TEXT,
    provenance TEXT, metadata TEXT
);
CREATE INDEX IF NOT EXISTS executions_by_key ON executions (execution_spec_id, success);
CREATE TABLE IF NOT EXISTS artifacts (
    artifact_id TEXT PRIMARY KEY, artifact_type TEXT NOT NULL, content BLOB,
    original_name TEXT, extension TEXT, size INTEGER, artifact_step INTEGER,
    origin_step_name TEXT, metadata TEXT, fields TEXT, origin_step_run_id TEXT,
    origin_step INTEGER, created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS artifact_edges (
    execution_run_id TEXT NOT NULL, source_artifact_id TEXT NOT NULL,
    target_artifact_id TEXT NOT NULL, source_artifact_type TEXT, target_artifact_type TEXT,
    source_role TEXT, target_role TEXT, group_id TEXT, step_boundary INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_by_source ON artifact_edges (source_artifact_id);
CREATE INDEX IF NOT EXISTS edges_by_target ON artifact_edges (target_artifact_id);
CREATE TABLE IF NOT EXISTS execution_roles (
    execution_run_id TEXT NOT NULL, direction TEXT NOT NULL, role TEXT NOT NULL,
    artifact_ids TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS execution_roles_by_run ON execution_roles (execution_run_id);
CREATE TABLE IF NOT EXISTS step_outputs (
    step_run_id TEXT NOT NULL, role TEXT NOT NULL, artifact_ids TEXT NOT NULL,
    digest TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS step_outputs_by_run ON step_outputs (step_run_id, role, digest);
CREATE TABLE IF NOT EXISTS committed_bundles (
    bundle TEXT PRIMARY KEY, step_dir TEXT NOT NULL, committed_at INTEGER NOT NULL
);
"""


class SchemaVersionError(RuntimeError):
    """The database was written by a newer stemma, whose schema this one does not know."""


def ensure_schema(connection: sqlite3.Connection) -> None:
    """Create the tables if they are missing (idempotent, safe from several processes at once).

    Args:
        connection: a connection in autocommit mode (``isolation_level=None``).

    Raises:
        SchemaVersionError: the database's schema is newer than this module's.
    """
    found = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if found == SCHEMA_VERSION:
        return
    if found > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{DATABASE_FILE} has schema version {found}, newer than this stemma-core's "
            f"{SCHEMA_VERSION}: upgrade stemma-core to read it"
        )
    connection.execute("BEGIN IMMEDIATE")
    try:
        for statement in _DDL.split(";"):
            if statement.strip():
                connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def insert_sql(table: str, columns: tuple[str, ...], *, or_ignore: bool = False) -> str:
    """An ``INSERT`` of one row of ``columns`` into ``table`` (``OR IGNORE`` keeps the first)."""
    verb = "INSERT OR IGNORE" if or_ignore else "INSERT"
    return f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
