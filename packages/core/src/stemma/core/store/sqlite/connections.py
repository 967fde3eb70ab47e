"""Connections to ``core.sqlite``: one per thread and process, WAL mode, a generous busy wait.

SQLite connections must not be shared between threads, nor carried across a ``fork``: each
thread of each process opens its own, on first use, and a forked child (a worker of the local
process pool) opens fresh ones instead of touching its parent's. Writers take the database's
write lock at ``BEGIN IMMEDIATE`` and wait for it up to the busy timeout, so the orchestrator's
threads and other processes on the same root queue instead of failing.

WAL lets readers (workers loading their inputs) read while a commit writes. It needs the
processes to share memory, so the database must be on a local filesystem: a root on NFS or
Lustre that SLURM nodes read at once is stemma-storage's (Delta Lake) job.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stemma.core.crash_points import crash_point
from stemma.core.store.sqlite.schema import ensure_schema

BUSY_TIMEOUT_SECONDS = 300.0
"""How long a writer waits for another's transaction to end before giving up."""


class Connections:
    """The connections of one store to one database file, opened lazily per thread."""

    def __init__(self, path: Path, *, busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> None:
        """Prepare connections to ``path``; nothing is opened (or created) yet.

        Args:
            path: the database file.
            busy_timeout: seconds a statement waits for the write lock.
        """
        self.path = path
        self._busy_timeout = busy_timeout
        self._local = threading.local()

    def reader(self) -> sqlite3.Connection | None:
        """This thread's connection, or ``None`` when the database does not exist yet.

        Reading never creates the database: a root nobody committed to reads as empty.
        """
        if not self.path.is_file():
            return None
        return self._connection()

    def query(self, sql: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """The rows of one read, each as ``{column: value}``; none when there is no database."""
        connection = self.reader()
        if connection is None:
            return []
        cursor = connection.execute(sql, parameters)
        columns = [column[0] for column in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor]

    @contextmanager
    def writing(self) -> Generator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``), rolled back on any error.

        Creates the database and its tables on first use.

        Yields:
            This thread's connection, inside the transaction.
        """
        connection = self._connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
            connection.execute("COMMIT")
            crash_point("sqlite.commit")
        except BaseException:
            if connection.in_transaction:  # (also when COMMIT itself failed)
                connection.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close this thread's connection (others close when their threads end)."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None and getattr(self._local, "pid", None) == os.getpid():
            connection.close()
        self._local.connection = None

    def _set_wal(self, connection: sqlite3.Connection) -> None:
        """Switch the database to WAL, waiting out another process doing the same.

        Changing the journal mode of a new database needs it to itself, and SQLite answers
        "database is locked" at once (no busy handler) while another process's first
        connection holds it: two runs opening a fresh root together. Try again until the busy
        timeout has passed.
        """
        deadline = time.monotonic() + self._busy_timeout
        delay = 0.005
        while True:
            try:
                connection.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None and getattr(self._local, "pid", None) == os.getpid():
            return connection
        # (a connection inherited through fork is left alone, never closed: closing it could
        # release locks its parent holds)
        if self.path.is_file() and not os.access(self.path.parent, os.W_OK | os.X_OK):
            connection = _read_only_connection(self.path, self._busy_timeout)
            self._local.connection = connection
            self._local.pid = os.getpid()
            return connection
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=True
        )
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            self._set_wal(connection)
            # FULL, not WAL's usual NORMAL: a staged bundle is deleted once its commit returns,
            # so the commit must survive a power cut, not only a crash of the process.
            connection.execute("PRAGMA synchronous = FULL")
            # Up to 64 MiB of pages (2 MiB by default), taken only as used: a wave's inserts into
            # the id indexes land on random pages, more of them than the default holds.
            connection.execute("PRAGMA cache_size = -65536")
            ensure_schema(connection)
        except BaseException:
            connection.close()
            raise
        self._local.connection = connection
        self._local.pid = os.getpid()
        return connection


def _read_only_connection(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """A connection that only reads, for a root this process cannot write (a read-only mount).

    WAL needs its index file beside the database, which cannot be made there: a database
    whose last writer closed cleanly (no ``-wal`` file left) is opened immutable, without
    locks or index; one with a ``-wal`` file is opened read-only, and SQLite reads it if it can.
    """
    immutable = "" if path.with_name(f"{path.name}-wal").exists() else "&immutable=1"
    return sqlite3.connect(
        f"{path.as_uri()}?mode=ro{immutable}",
        uri=True,
        timeout=busy_timeout,
        isolation_level=None,
        check_same_thread=True,
    )
