"""The history of a root stemma-core alone recorded, read as the Delta tables would hold it.

A root built without stemma-storage keeps its history in ``{root}/core.sqlite``; the Delta store
imports it the first time it is opened there (:mod:`stemma.storage.sqlite_import`). Until then
(:func:`~stemma.core.store.history_source.history_kind`, the rule every reader follows), the
read-only queries (``stemma artifacts``, ``stemma lineage``…) read ``core.sqlite`` itself,
converted row by row as the import would convert it, so they answer the same on either store and
never write to the root.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from typing import Any, Protocol

import polars as pl

from stemma.core.store.history_source import history_kind
from stemma.core.store.locations import RootLayout
from stemma.core.store.sqlite import schema as core_schema
from stemma.core.store.sqlite.connections import Connections
from stemma.storage.schemas import (
    ARTIFACT_EDGES,
    EXECUTION_EDGES,
    EXECUTIONS,
    STEP_OUTPUTS,
    STEPS,
    TableSpec,
)
from stemma.storage.sqlite_import import as_delta_frames
from stemma.storage.tables import read_table

_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    ARTIFACT_EDGES.name: ("artifact_edges", core_schema.ARTIFACT_EDGE_COLUMNS),
    EXECUTION_EDGES.name: ("execution_roles", core_schema.EXECUTION_ROLE_COLUMNS),
    STEP_OUTPUTS.name: ("step_outputs", core_schema.STEP_OUTPUT_COLUMNS),
    STEPS.name: ("steps", core_schema.STEP_COLUMNS),
    EXECUTIONS.name: ("executions", core_schema.EXECUTION_COLUMNS),
}
"""The SQLite table each Delta table comes from; the artifact index and the content tables all
come from ``artifacts``."""


class TableReader(Protocol):
    """Reads one table's rows matching ``predicate`` (``tables.read_table``'s signature)."""

    def __call__(
        self,
        spec: TableSpec,
        predicate: pl.Expr | None = None,
        columns: Sequence[str] | None = None,
    ) -> pl.DataFrame:
        """The rows, an empty frame of the schema when there are none."""
        ...


def table_reader(layout: RootLayout) -> TableReader:
    """How to read the root's tables: from Delta, or from ``core.sqlite`` when only it is there.

    A reader from ``core.sqlite`` reads each SQLite table once, the first time it is asked for.
    """
    if history_kind(layout.root) != "sqlite":

        def from_delta(
            spec: TableSpec, predicate: pl.Expr | None = None, columns: Sequence[str] | None = None
        ) -> pl.DataFrame:
            return read_table(layout, spec, predicate, columns)

        return from_delta
    return _SqliteReader(layout)


class _SqliteReader:
    def __init__(self, layout: RootLayout) -> None:
        self._database = layout.root / core_schema.DATABASE_FILE
        self._frames: dict[str, pl.DataFrame] = {}

    def __call__(
        self,
        spec: TableSpec,
        predicate: pl.Expr | None = None,
        columns: Sequence[str] | None = None,
    ) -> pl.DataFrame:
        if spec.name not in self._frames:
            self._load(spec)
        frame = self._frames.get(spec.name, spec.empty())
        if predicate is not None:
            frame = frame.filter(predicate)
        return frame.select(columns) if columns is not None else frame

    def _load(self, spec: TableSpec) -> None:
        source, columns = _SOURCES.get(spec.name, ("artifacts", core_schema.ARTIFACT_COLUMNS))
        rows = self._rows(source, columns)
        unknown: set[str] = set()  # a type not registered here: its artifacts stay unnamed
        for made, frame in as_delta_frames(source, rows, unknown).items():
            self._frames[made.name] = frame
        self._frames.setdefault(spec.name, spec.empty())

    def _rows(self, table: str, columns: tuple[str, ...]) -> list[dict[str, Any]]:
        sql = f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid"
        if self._database.with_name(f"{self._database.name}-wal").is_file():
            # A writer's log is there (running, or died before closing): read beside it,
            # read-only, so nothing is checkpointed into the database by this read.
            uri = f"{self._database.as_uri()}?mode=ro"
            with contextlib.closing(sqlite3.connect(uri, uri=True)) as connection:
                found = connection.execute(sql).fetchall()
            return [dict(zip(columns, row, strict=True)) for row in found]
        # At rest: through core's own connections, closed at once. The last connection to a
        # WAL database removes the -wal and -shm files it opened with, so the root is left as
        # it was (a read-only one creates them too, and cannot remove them).
        connections = Connections(self._database)
        try:
            return connections.query(sql)
        finally:
            connections.close()
