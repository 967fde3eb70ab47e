"""Reading and appending to the Delta tables: the only module that writes Delta.

Every append to a table runs under that table's file lock, so checking "is this bundle already
committed / is this artifact already here" and writing the answer is one step for every stemma
writer on the root. Delta's own conflict detection stays as the backstop, with retries.
"""

from __future__ import annotations

import random
import time
import urllib.parse
from collections.abc import Sequence

import polars as pl
from deltalake import (
    ColumnProperties,
    CommitProperties,
    DeltaTable,
    Transaction,
    WriterProperties,
    write_deltalake,
)
from deltalake.exceptions import CommitFailedError, DeltaError
from deltalake.transaction import PostCommitHookProperties

from stemma.core.file_lock import FileLock
from stemma.core.store.locations import RootLayout
from stemma.storage import object_roots
from stemma.storage.data_files import check_data_files
from stemma.storage.errors import CommitConflictError
from stemma.storage.locks import table_lock_path
from stemma.storage.schemas import TableSpec
from stemma.storage.table_handles import table_handle
from stemma.storage.table_places import TablePlace, table_place

COMMIT_ATTEMPTS = 8
"""How many times a conflicting commit is tried before :class:`CommitConflictError`."""
_BACKOFF_SECONDS = 0.05


def _writer(max_row_group_size: int | None = None) -> WriterProperties:
    content = ColumnProperties(dictionary_enabled=False, statistics_enabled="NONE")
    return WriterProperties(
        compression="ZSTD",
        column_properties={"content": content},
        max_row_group_size=max_row_group_size,
    )


WRITER_PROPERTIES = _writer()
"""How every Delta data file stemma writes is written (appends and compactions alike).

An artifact's ``content`` is one value per row, unique, often large (a data artifact of 100 MB)
and never filtered on, so it gets neither a dictionary nor statistics. With both, the Parquet
writer kept the whole first value as a dictionary page before falling back, and the whole
smallest and largest values as the column's min and max in the file's footer: a file of two
100 MB artifacts took 303 MB and a reader parsed 200 MB of footer to reach one of them
(benchmarks/README.md, "A unit that reads a large input"). No key changes: an artifact's id
is its content's hash, whatever file holds it.
"""
ROW_GROUP_CONTENT_BYTES = 4 << 20
"""About how much artifact content one row group of an append holds (the compaction target).

A reader decodes a whole row group to get one row of it: with every artifact of a wave in one
row group, reading one 100 MB data artifact decoded its neighbours too. A row group of large
contents is cut at this size (one row for a value larger), so a read decodes about what it
asked for; tables of small contents keep one row group an append.
"""


def read_table(
    layout: RootLayout,
    spec: TableSpec,
    predicate: pl.Expr | None = None,
    columns: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Rows of one table matching ``predicate``; an empty frame of the schema if none exist.

    The predicate and the column selection are pushed into the Delta scan, so files whose
    statistics rule it out are skipped and the other columns are not read. Each file the log
    lists is looked at first (:func:`~stemma.storage.data_files.check_data_files`): polars
    panics on one that is damaged. (Not in an object store, where a file is written whole or
    not at all and a look would cost a request per file: ``stemma check`` looks there.)

    Raises:
        DamagedTableError: a data file of the table is missing or damaged (it is named).
    """
    place = table_place(layout, spec.name)
    if not place.exists():
        return _selected(spec.empty().lazy(), predicate, columns).collect()
    with table_handle(place) as table:  # collected before the handle is given back
        if place.local is not None:
            check_data_files(layout, spec.name, table)
        return _selected(scan_table(table, place), predicate, columns).collect()


def _selected(
    scan: pl.LazyFrame, predicate: pl.Expr | None, columns: Sequence[str] | None
) -> pl.LazyFrame:
    if predicate is not None:
        scan = scan.filter(predicate)
    if columns is not None:  # before collecting: the Parquet reads skip the other columns
        scan = scan.select(columns)
    return scan


def append_rows(
    layout: RootLayout, spec: TableSpec, frame: pl.DataFrame, *, app_id: str | None = None
) -> bool:
    """Append ``frame`` to a table, creating the table on first use.

    With ``app_id``, the append is recorded as that application transaction and skipped when
    the table already holds it. For tables with a key column, rows whose key is already in the
    table (or earlier in ``frame``) are dropped.

    Returns:
        Whether any row was written.

    Raises:
        CommitConflictError: the commit conflicted on every attempt.
        DamagedTableError: a data file of a table with a key column is damaged (its keys are
            read to drop the rows already there).
    """
    place = table_place(layout, spec.name)
    try:
        return _append_locked(layout, place, spec, frame, app_id)
    except (DeltaError, OSError) as err:  # a store that stopped answering: said in one line
        if place.root is not None and object_roots.transport_failed(err):
            raise object_roots.unreachable(place.root, err) from err
        raise


def _append_locked(
    layout: RootLayout, place: TablePlace, spec: TableSpec, frame: pl.DataFrame, app_id: str | None
) -> bool:
    """:func:`append_rows` under the table's lock: make the table, or append, or try again."""
    with FileLock(table_lock_path(layout, spec)):
        if not place.exists():
            created = _created_with(place, spec, frame, app_id)
            if created is not None:
                return created
        if place.local is None:
            # A bucket's first try commits from the handle as it is: the commit fails if anyone
            # committed after its version, and the tries below catch up (table_handles).
            with table_handle(place, catch_up=False) as table:
                written = _append(layout, place, spec, frame, table, app_id)
            if written is not None:
                return written
        for attempt in range(COMMIT_ATTEMPTS):
            with table_handle(place) as table:
                written = _append(layout, place, spec, frame, table, app_id)
            if written is not None:
                return written
            # Another writer (one not holding our lock) committed first: back off, re-read.
            time.sleep(_BACKOFF_SECONDS * 2**attempt * (1 + random.random()))
    raise CommitConflictError(
        f"appending to {spec.name} conflicted {COMMIT_ATTEMPTS} times; the staged bundle is "
        "kept and the next recover() commits it"
    )


def _append(
    layout: RootLayout,
    place: TablePlace,
    spec: TableSpec,
    frame: pl.DataFrame,
    table: DeltaTable,
    app_id: str | None,
) -> bool | None:
    """One try of :func:`append_rows`: whether rows were written (None: another writer won)."""
    if app_id is not None and table.transaction_version(app_id) is not None:
        return False
    if spec.key is not None and place.local is not None:
        check_data_files(layout, spec.name, table)  # polars panics on a damaged file
    rows = _new_rows(table, place, spec, frame)
    if rows.is_empty():
        return False
    try:
        write_deltalake(
            table,
            spec.to_arrow(rows),
            mode="append",
            writer_properties=_writer_for(rows),
            commit_properties=_transaction(app_id),
            post_commithook_properties=post_commit_hooks(table),
        )
    except CommitFailedError:
        return None
    return True


def _created_with(
    place: TablePlace, spec: TableSpec, frame: pl.DataFrame, app_id: str | None
) -> bool | None:
    """Create the table with ``frame``'s rows in its first commit; None if another writer did.

    Returns whether rows were written; None means the table was created first elsewhere, so the
    rows go through an append. One commit, where creating the table and then appending made
    two: on a bucket delta-rs's ``DeltaTable.create`` loads the new table three times over, and
    the append opens it again, some 18 requests more than this write's 10 (design 0021,
    "Requests").
    """
    rows = _new_rows(None, place, spec, frame)
    if place.local is not None:
        place.local.mkdir(parents=True, exist_ok=True)
    try:
        write_deltalake(
            place.uri,
            spec.to_arrow(rows),
            mode="error",  # never an append to a table someone else just made
            configuration={"delta.checkpointInterval": str(checkpoint_interval(place))},
            writer_properties=_writer_for(rows),
            commit_properties=_transaction(app_id),
            post_commithook_properties=PostCommitHookProperties(
                create_checkpoint=False, cleanup_expired_logs=False
            ),
            storage_options=place.options,
        )
    except (CommitFailedError, DeltaError):
        if place.exists():  # created first by a writer on another machine (ours hold our lock)
            return None
        raise
    place.made()
    return not rows.is_empty()


def _transaction(app_id: str | None) -> CommitProperties:
    """A commit's properties: ``app_id``'s application transaction, so it is made once.

    No retry: delta-rs would otherwise commit over the writers that came first whenever their
    commits do not conflict at Delta's level, and a plain append never does, so the rows an
    append checked for duplicates, and its transaction, would be checked against a version that
    is no longer the newest. Failing instead, the append catches up and checks again.
    """
    return CommitProperties(
        max_commit_retries=0,
        app_transactions=[Transaction(app_id, 1)] if app_id is not None else None,
    )


CHECKPOINT_INTERVAL = 100
"""Commits between two checkpoints of a table (its ``delta.checkpointInterval``).

After every this many commits the append that made the last one writes a checkpoint (the
post-commit hook delta-rs runs by default), so opening a table replays at most this many commit
files. The same as delta-rs's default, set on each table stemma creates so that it stays so;
docs/design/0012-log-growth.md has the measurements behind it. A table in an object store
takes :data:`BUCKET_CHECKPOINT_INTERVAL` instead."""

BUCKET_CHECKPOINT_INTERVAL = 10
""":data:`CHECKPOINT_INTERVAL` for a table stemma creates in an object store.

There every commit an open replays costs two requests (delta-rs reads each commit file twice)
and the checkpoint a dozen ranged reads whatever its size, so at 100 an open made 12 to 210
requests, 110 on average; at 10 it makes 12 to 30. A checkpoint costs its writer two more
puts every ten commits (docs/design/0021-object-store-roots.md)."""


def post_commit_hooks(table: DeltaTable) -> PostCommitHookProperties:
    """delta-rs's hooks for the next commit to ``table``: expired log entries go with checkpoints.

    The checkpoint is written when one is due, as by default; the log's expired entries are
    looked for only with that checkpoint.

    delta-rs's default looks for expired entries after every commit: a listing of the whole
    ``_delta_log/`` (on a bucket, a page of up to 1,000 keys; 0.05 s on the local S3 server at
    400 entries), to find nothing to remove until the next checkpoint, since an entry may go
    only once a checkpoint after it holds the table's state. Delta's own writers clean up when
    they checkpoint, and so does this; the entries removed are the same, a few commits later.
    """
    configured = table.metadata().configuration.get("delta.checkpointInterval")
    interval = int(configured) if configured else CHECKPOINT_INTERVAL
    # delta-rs checkpoints a commit of version v when (v + 1) % interval == 0
    checkpoint_due = (table.version() + 2) % interval == 0
    return PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=checkpoint_due)


def _writer_for(rows: pl.DataFrame) -> WriterProperties:
    """:data:`WRITER_PROPERTIES`, with row groups cut at :data:`ROW_GROUP_CONTENT_BYTES`."""
    if "content" not in rows.columns or rows.is_empty():
        return WRITER_PROPERTIES
    content = rows.get_column("content")
    sizes = content.bin.size() if content.dtype == pl.Binary else content.str.len_bytes()
    largest = sizes.max()
    if not isinstance(largest, int) or largest * rows.height <= ROW_GROUP_CONTENT_BYTES:
        return WRITER_PROPERTIES
    return _writer(max_row_group_size=max(1, ROW_GROUP_CONTENT_BYTES // largest))


def scan_table(table: DeltaTable, place: TablePlace) -> pl.LazyFrame:
    """A lazy scan of ``table`` that also works under a root whose path needs escaping.

    delta-rs hands out file URIs with a space escaped (``%20``), which polars' Delta scan then
    looks for verbatim; such a root's files are given to polars' Parquet scan unescaped
    (:func:`scan_files`). In an object store polars is given the store's options too: its
    reader is its own.
    """
    if place.local is not None and "%" in table.table_uri:
        return scan_files(table)
    return pl.scan_delta(table, storage_options=place.options)


def scan_files(table: DeltaTable) -> pl.LazyFrame:
    """What ``pl.scan_delta`` scans, for a local table (one whose path delta-rs escapes too).

    polars' own Parquet reader over the files the log lists (stemma writes neither partitions
    nor deletion vectors), with the table's schema, so a file written before a column was added
    reads with it null, as Delta reads it. Not a pyarrow dataset: that reader takes several
    times as long over a large content value (a 100 MB data artifact: 0.18-0.7 s against
    0.07 s), and longer to set up for every small read.
    """
    import pyarrow as pa

    arrow = pa.schema(table.schema().to_arrow())  # pyright: ignore[reportArgumentType]
    schema: pl.Schema = pl.DataFrame(arrow.empty_table()).schema
    paths = [urllib.parse.unquote(uri) for uri in table.file_uris()]
    if not paths:
        return pl.LazyFrame(schema=schema)
    return pl.scan_parquet(
        paths,
        schema=schema,
        hive_partitioning=False,
        missing_columns="insert",
        extra_columns="ignore",
    )


def checkpoint_interval(place: TablePlace) -> int:
    """The ``delta.checkpointInterval`` stemma gives a table it creates at ``place``."""
    return CHECKPOINT_INTERVAL if place.local is not None else BUCKET_CHECKPOINT_INTERVAL


def _new_rows(
    table: DeltaTable | None, place: TablePlace, spec: TableSpec, frame: pl.DataFrame
) -> pl.DataFrame:
    """``frame``'s rows whose key is in neither ``table`` (None: no table yet) nor earlier rows."""
    if spec.key is None:
        return frame
    unique = frame.unique(subset=spec.key, keep="first", maintain_order=True)
    if table is None:
        return unique
    keys = unique.get_column(spec.key)
    present = (
        scan_table(table, place)
        .select(spec.key)
        .filter(pl.col(spec.key).is_in(keys.implode()))
        .collect()
    )
    if present.is_empty():
        return unique
    return unique.join(present, on=spec.key, how="anti", maintain_order="left")
