"""One open handle per Delta table per process, lent to one thread at a time.

Opening a Delta table replays its log since the last checkpoint (tens of milliseconds on a busy
table; on a bucket a dozen ranged reads of the checkpoint and two reads of each commit after
it); catching up a handle already open reads only the new commits. So a handle is kept and
caught up each time it is lent.

**One per process, not one per thread.** Handles were kept per thread: a step thread, the
commit thread and the main thread each caught up their own handle of the same table, each
reading the same new commits. On a local root that costs page-cache reads; on a bucket each
catch-up is a listing and two requests per new commit, and the 1,000-unit step made some 170
requests, most of them catch-ups (benchmarks/README.md, "A root in S3, a fourth time").

**Lent under its lock, for the whole use.** A delta-rs handle is not meant to be used by two
threads at once: one handle per process was tried before without a lock and deadlocked, a step
thread's polars scan reading the handle as it collected while the compaction thread caught the
same handle up. So :func:`table_handle` holds the handle's lock from the catch-up until the
borrower is done with it (an append, or a scan collected), and the borrower never lets a lazy
scan of it out. The lock is re-entrant (a borrower that reads the same table again, as an
append's duplicate check does, takes it again), and no borrower takes a second table's handle
while it holds one, so two threads cannot wait on each other. Automatic compaction keeps
handles of its own (:mod:`~stemma.storage.auto_compaction`).

**Reopened from the newest checkpoint.** A caught-up handle never moves to a newer checkpoint:
it keeps every commit since it was opened, and each append through it costs more (about 75 ms
more per thousand commits), so once it has caught up :data:`REOPEN_AFTER_COMMITS` commits it is
opened afresh (docs/design/0012-log-growth.md).

**Lent as it is, for an append to a bucket.** A catch-up on a bucket is a listing and a read
of ``_last_checkpoint`` at least, and an append validates its snapshot anyway: it commits with
no retry, so its conditional put fails if anyone committed after the version it read. So
:func:`~stemma.storage.tables.append_rows` borrows the handle with ``catch_up=False`` and
catches up only after that failure (design 0021, "Requests").
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Generator
from dataclasses import dataclass, field

from deltalake import DeltaTable

from stemma.storage.table_places import TablePlace

REOPEN_AFTER_COMMITS = 100
"""Commits a handle catches up before it is opened afresh, from the newest checkpoint."""


@dataclass(kw_only=True)
class _Handle:
    lock: threading.RLock = field(default_factory=threading.RLock)
    table: DeltaTable | None = None
    opened_at: int = 0
    """The version the handle was loaded at: it replays its log from the checkpoint before it."""


_HANDLES: dict[str, _Handle] = {}
_HANDLES_LOCK = threading.Lock()


@contextlib.contextmanager
def table_handle(place: TablePlace, *, catch_up: bool = True) -> Generator[DeltaTable]:
    """The table at ``place``, at its newest version, this thread's alone until the block ends.

    With ``catch_up=False`` a handle already open is lent at the version it holds (the newest
    this process committed or read), unless it is due to be opened afresh.

    Whatever the block raises drops the handle (it may be half-caught-up, or its table damaged):
    the next borrower opens the table afresh.
    """
    with _HANDLES_LOCK:
        handle = _HANDLES.setdefault(place.uri, _Handle())
    with handle.lock:
        try:
            handle.table = _caught_up(handle, place, catch_up=catch_up)
            yield handle.table
        except BaseException:
            handle.table = None
            raise


def _caught_up(handle: _Handle, place: TablePlace, *, catch_up: bool) -> DeltaTable:
    table = handle.table
    if table is not None:
        if catch_up:
            table.update_incremental()
        if table.version() - handle.opened_at < REOPEN_AFTER_COMMITS:
            return table
    table = DeltaTable(place.uri, storage_options=place.options)
    handle.opened_at = table.version()
    return table
