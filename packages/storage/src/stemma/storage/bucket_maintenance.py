"""Compaction and vacuum of a root whose tables are in an object store.

The same work :func:`~stemma.storage.maintenance.compact_root` and
:func:`~stemma.storage.maintenance.vacuum_root` do on a filesystem, through delta-rs over
``object_store``: each table is found by listing the bucket (two requests per table group),
compacted and checkpointed, or vacuumed, under the writer lock this machine's runners hold
(other machines' writers are kept apart by Delta's conditional commits, and compaction only
adds a version: it never removes what a reader needs). What differs:

- a table's files are not looked at before compaction rewrites them (a file in a bucket is
  written whole or not at all, and a look would cost a request per file);
- the log entries before a checkpoint are left (delta-rs removes them by the table's own log
  retention when it writes a checkpoint); a vacuum reports none;
- the sizes of the files a vacuum lists cost one ``HEAD`` each.
"""

from __future__ import annotations

from collections.abc import Iterator

from deltalake import DeltaTable

from stemma.core.crash_points import crash_point
from stemma.core.file_lock import FileLock
from stemma.core.store.locations import RootLayout
from stemma.storage import object_roots
from stemma.storage.leftovers import Removal
from stemma.storage.locks import table_lock_path
from stemma.storage.table_places import TablePlace, table_place
from stemma.storage.tables import WRITER_PROPERTIES, post_commit_hooks


def bucket_tables(layout: RootLayout) -> list[TablePlace]:
    """Every Delta table under the bucket root's ``delta/``, user content tables included."""
    root = layout.store
    if root is None:
        return []
    import obstore

    store = object_roots.object_store(root)
    found: list[str] = []
    try:
        for group in _prefixes(obstore.list_with_delimiter(store, "delta/")):
            found += _prefixes(obstore.list_with_delimiter(store, group))
    except Exception as err:
        raise object_roots.unreachable(root, err) from err
    names = sorted(prefix.removeprefix("delta/").strip("/") for prefix in found)
    return [table_place(layout, name) for name in names]


def small_objects(place: TablePlace, small_bytes: int, enough: int) -> int:
    """How many data objects under the table's prefix are smaller than ``small_bytes``.

    Counted up to ``enough``, from a listing that starts after the log's keys (they sort before
    the data files'): one request per thousand data objects, where opening the table costs a
    handful and more for each commit since its checkpoint. An upper bound of the table's small
    files, since it also counts the files a compaction replaced that no vacuum has removed.
    """
    root = place.root
    if root is None:
        raise ValueError(f"{place.uri} is not in an object store")
    import obstore

    store = object_roots.object_store(root)
    prefix = f"delta/{place.name}/"
    found = 0
    # "_delta_log0" sorts after every "_delta_log/..." key ('/' < '0') and before "part-..."
    for chunk in obstore.list(store, prefix, offset=f"{prefix}_delta_log0", chunk_size=1000):
        for meta in chunk:
            if meta["path"].endswith(".parquet") and meta["size"] < small_bytes:
                found += 1
                if found >= enough:
                    return found
    return found


def compact_tables(layout: RootLayout, target_size: int | None) -> Iterator[tuple[str, int, int]]:
    """Compact and checkpoint each table; yield ``(name, files before, files after)``."""
    for place in bucket_tables(layout):
        with FileLock(table_lock_path(layout, place.name)):
            table = DeltaTable(place.uri, storage_options=place.options)
            before = len(table.file_uris())
            table.optimize.compact(
                target_size=target_size,
                writer_properties=WRITER_PROPERTIES,
                post_commithook_properties=post_commit_hooks(table),
            )
            crash_point(f"delta.compacted.{_point(place.name)}")
            table.create_checkpoint()
            crash_point(f"delta.checkpoint.{_point(place.name)}")
            after = len(table.file_uris())
        yield place.name, before, after


def vacuum_tables(layout: RootLayout, retain_hours: int, *, apply: bool) -> list[Removal]:
    """The tables' files nothing references, older than ``retain_hours``; removed with ``apply``."""
    removals: list[Removal] = []
    for place in bucket_tables(layout):
        with FileLock(table_lock_path(layout, place.name)):
            table = DeltaTable(place.uri, storage_options=place.options)
            listed: list[str] = table.vacuum(
                retention_hours=retain_hours,
                dry_run=True,
                enforce_retention_duration=False,
                full=True,
            )
            sizes = {relative: _size(layout, place, relative) for relative in listed}
            # an expired tombstone is listed whether its file is there or not: one already gone
            # is no removal (see maintenance._table_files)
            gone = {relative for relative, size in sizes.items() if size is None}
            if apply and set(listed) - gone:
                listed = table.vacuum(
                    retention_hours=retain_hours,
                    dry_run=False,
                    enforce_retention_duration=False,
                    full=True,
                )
                crash_point(f"delta.vacuumed.{_point(place.name)}")
        removals += [
            Removal(
                kind=f"table {place.name}",
                path=f"{place.uri}/{relative}",
                size=sizes.get(relative) or 0,
            )
            for relative in sorted(set(listed) - gone)
        ]
    return removals


def _size(layout: RootLayout, place: TablePlace, relative: str) -> int | None:
    """The file's size; ``None`` when it is not there."""
    import obstore

    assert layout.store is not None
    try:
        meta = obstore.head(
            object_roots.object_store(layout.store), f"delta/{place.name}/{relative}"
        )
    except FileNotFoundError:  # gone already (obstore's not-found is this)
        return None
    except Exception:  # unreadable: the removal is still listed
        return 0
    return int(meta["size"])


def _prefixes(listing: object) -> list[str]:
    found = listing["common_prefixes"]  # type: ignore[index]  # obstore's ListResult
    return [str(prefix) for prefix in found]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def _point(table: str) -> str:
    return table.replace("/", ".")
