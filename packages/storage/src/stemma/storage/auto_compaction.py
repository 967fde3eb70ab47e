"""Compacting a root's tables after its commits, in a thread of their own, as a policy says.

The seed's commit phase ends with "compact tables". :class:`DeltaStore.commit_wave
<stemma.storage.delta_store.DeltaStore.commit_wave>` tells an :class:`AutoCompaction` it
committed (:meth:`AutoCompaction.after_commit`) and returns at once: the counting and the
compacting happen in a background thread, so a step's result never waits for them. Every
:attr:`~stemma.storage.compaction_policy.CompactionPolicy.count_every` commits (and at the first)
a *pass* counts each table's small files and compacts the tables that are due
(:func:`~stemma.storage.compaction_policy.due`), most small files first, one at a time, until the
pass has run its time budget.

Each table is compacted under its writer lock, the one every stemma append and ``stemma compact``
hold, so it never interleaves with another runner's commit to that table; the files it replaces
stay on disk, marked removed, for readers of older versions, until ``stemma vacuum`` deletes
them. Delta commits the compaction atomically: a process killed while it runs leaves either the
table as it was (and a data file nothing references, which vacuum removes) or the compacted one.

The thread is started when a pass is due and ends when no other is: an idle store holds no
thread. It is not a daemon, so a script's end lets the compaction under way finish (it rewrites
at most a few megabytes), but starts no other once the main thread is done, and gives up a wait
for a lock (:mod:`stemma.storage.lock_waits`); what is left is due at the next run's first
commit.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import cast

from deltalake import DeltaTable

from stemma.core.crash_points import crash_point
from stemma.core.store.locations import RootLayout
from stemma.storage.bucket_maintenance import bucket_tables, small_objects
from stemma.storage.compaction_policy import (
    CompactionPolicy,
    TableFiles,
    compaction_policy,
    due,
    small_count,
)
from stemma.storage.data_files import check_data_files, logged_files
from stemma.storage.lock_waits import acquire_within
from stemma.storage.maintenance import Compaction, table_lock
from stemma.storage.table_places import TablePlace, table_place
from stemma.storage.tables import WRITER_PROPERTIES, post_commit_hooks

log = logging.getLogger(__name__)

POINT = "delta.auto_compacted"
"""The crash point after each automatic compaction's commit. One name for every table: the
thread's order across tables depends on timing, so a test addresses the Kth compaction of a run."""


def auto_compaction(
    layout: RootLayout, compact: bool | CompactionPolicy | None
) -> AutoCompaction | None:
    """What a store given ``compact`` runs after its commits (see :func:`compaction_policy`).

    ``None`` when it runs nothing: ``compact`` or ``$STEMMA_COMPACT`` says off. On a root in
    an object store the tables are found by listing the bucket (a few requests a pass), each
    table's data objects are listed (one request) and only a table with enough small ones is
    counted, from its log's recorded sizes; a table is due there at fewer small files (each one
    costs every read of the table a request).

    Raises:
        ValueError: a compaction variable holds something it cannot be (it is named).
    """
    policy = compaction_policy(compact, in_bucket=layout.store is not None)
    if policy is None:
        return None
    return AutoCompaction(layout, policy)


class AutoCompaction:
    """The compactions a store runs after its commits (one per :class:`DeltaStore`).

    Args:
        layout: the root whose tables it compacts.
        policy: when a table is due, and how much one compaction rewrites.
    """

    def __init__(self, layout: RootLayout, policy: CompactionPolicy) -> None:
        self._layout = layout
        self._policy = policy
        self._guard = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._pending = False
        self._running = False
        self._commits = policy.count_every - 1  # the first commit counts
        self._left: dict[str, int] = {}
        self._done: list[Compaction] = []
        self._warned: set[str] = set()
        self._handles: dict[str, DeltaTable] = {}
        """One handle per table, caught up at each use, while passes follow one another: opening
        a table anew reads its log from its checkpoint on, each pass (in a bucket, most of the
        requests a busy run's upkeep made). Only the thread running passes uses them, never a
        step's thread; they are let go when it ends, in that thread, so no native handle is left
        for the interpreter's teardown to destroy."""

    @property
    def policy(self) -> CompactionPolicy:
        """When a table is due, and how much one compaction rewrites."""
        return self._policy

    @property
    def compactions(self) -> tuple[Compaction, ...]:
        """Every compaction this store made so far, oldest first."""
        with self._guard:
            return tuple(self._done)

    def after_commit(self) -> None:
        """Note a commit; start a pass in the background when one is due. Never blocks."""
        with self._guard:
            self._commits += 1
            if self._commits < self._policy.count_every:
                return
            self._commits = 0
            self._pending = True
            self._idle.clear()
            if self._running:
                return  # the running thread takes it after its pass
            self._running = True
        try:
            threading.Thread(target=self._drain, name="stemma-compaction").start()
        except RuntimeError:  # the interpreter is shutting down: no new thread, no pass
            self._stopped()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no pass is due or running; return False if ``timeout`` ran out first."""
        return self._idle.wait(timeout)

    def _stopped(self) -> None:
        with self._guard:
            self._pending = False
            self._running = False
            self._idle.set()

    def _drain(self) -> None:
        try:
            while True:
                with self._guard:
                    if not self._pending:
                        self._handles.clear()  # (see below)
                        self._running = False
                        self._idle.set()
                        return
                    self._pending = False
                self._pass()
        except BaseException:
            self._handles.clear()
            self._stopped()
            raise

    def _pass(self) -> None:
        started = time.monotonic()
        found: dict[str, TablePlace] = {}
        counts: list[TableFiles] = []
        for place in self._tables():
            if not self._may_be_due(place):
                continue
            counted = self._count(place)
            if counted is not None:
                found[place.name] = place
                counts.append(counted)
        for number, table in enumerate(due(counts, self._policy, self._left)):
            if number and time.monotonic() - started > self._policy.budget_seconds:
                return  # the rest is due at the next commit's pass
            if not threading.main_thread().is_alive():
                return  # the script is ending: finish no more than the compaction under way
            self._compact(table.name, found[table.name])

    def _tables(self) -> list[TablePlace]:
        """The root's tables: its directories under ``delta/``, or its bucket's, listed."""
        if self._layout.store is not None:
            try:
                return bucket_tables(self._layout)
            except Exception as err:  # the bucket did not answer: upkeep waits for the next pass
                self._warn("(listing)", err)
                return []
        logs = sorted(self._layout.delta.glob("*/*/_delta_log"))  # tables are group/name
        names = [log.parent.relative_to(self._layout.delta).as_posix() for log in logs]
        return [table_place(self._layout, name) for name in names]

    def _may_be_due(self, place: TablePlace) -> bool:
        """Whether the table can be due: in a bucket, a listing of its data objects says.

        A pass at a run's first commit counted every table of a bucket root, opening each (some
        40 requests for a root's eight tables, two-thirds of a short step's own): a table of
        fewer small objects than the policy's count cannot be due, and its listing costs one
        request (design 0021, "Requests"). On a filesystem the count itself is as cheap.
        """
        if place.root is None:
            return True
        enough = self._policy.small_files + self._left.get(place.name, 0)
        try:
            return small_objects(place, self._policy.small_file_bytes, enough) >= enough
        except Exception:  # the bucket did not answer: the count says what is wrong, or skips
            return True

    def _count(self, place: TablePlace) -> TableFiles | None:
        try:
            return self._files(place, self._handle(place))
        except Exception:  # a table being created, or damaged: nothing to count now
            self._handles.pop(place.name, None)
            return None

    def _handle(self, place: TablePlace) -> DeltaTable:
        """The table at its newest version: the kept handle caught up, or one opened."""
        table = self._handles.get(place.name)
        if table is None:
            table = DeltaTable(place.uri, storage_options=place.options)
            self._handles[place.name] = table
        else:
            table.update_incremental()  # the log's new entries only
        return table

    def _files(self, place: TablePlace, table: DeltaTable) -> TableFiles:
        if place.local is not None:
            sizes = [size for _, size in logged_files(table, place.local)]
        else:  # in a bucket: the sizes the log records (no request per file)
            actions = table.get_add_actions(flatten=False)
            sizes = cast("list[int | None]", actions.column("size_bytes").to_pylist())  # pyright: ignore[reportUnknownMemberType]
        small = small_count(sizes, self._policy)
        return TableFiles(name=place.name, small=small, files=len(sizes))

    def _compact(self, name: str, place: TablePlace) -> None:
        lock = table_lock(self._layout, name)
        if not acquire_within(lock, self._policy.budget_seconds):
            return  # a long commit holds it, or the script ended: still due at the next pass
        try:
            table = self._handle(place)  # the newest version, under the lock
            before = self._files(place, table)
            if not due([before], self._policy, self._left):
                return  # another runner compacted it meanwhile
            if place.local is not None:  # before delta-rs reads them (a bucket's are whole)
                check_data_files(self._layout, name, table)
            started = time.perf_counter()
            table.optimize.compact(
                target_size=self._policy.target_bytes,
                max_concurrent_tasks=1,  # the other core is the run's
                writer_properties=WRITER_PROPERTIES,
                post_commithook_properties=post_commit_hooks(table),
            )
            crash_point(POINT)
            after = self._files(place, table)  # the handle is at the compaction's version
        except Exception as err:  # upkeep never fails a run; stemma compact reports it
            self._handles.pop(name, None)
            self._warn(name, err)
            return
        finally:
            lock.release()
        done = Compaction(table=name, files_before=before.files, files_after=after.files)
        with self._guard:
            self._left[name] = after.small
            self._done.append(done)
        took = (time.perf_counter() - started) * 1000
        log.debug("compacted %s: %d -> %d files in %.1f ms", name, before.files, after.files, took)

    def _warn(self, name: str, err: Exception) -> None:
        if name in self._warned:
            return
        self._warned.add(name)
        log.warning(
            "stemma could not compact the table %s of %s after a commit (%s); the run goes on. "
            "`stemma check` says what is wrong with it, `stemma compact` tries again",
            name,
            self._layout.root,
            err,
        )
