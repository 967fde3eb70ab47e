"""``stemma check --repair`` on a root in a bucket: the safe repairs, made in the bucket.

The same three a root on a filesystem gets (:mod:`stemma.storage.table_check`), in the same
words:

- a long log since the last checkpoint: a checkpoint is written;
- a damaged checkpoint whose commits are all still in the log: it is moved to the root's
  quarantine, with the ``_last_checkpoint`` that names it, so the table opens from its commits,
  and a new checkpoint is written;
- a damaged data file of a table whose rows can be made again (``steps``, ``executions``): it
  is moved to the quarantine and dropped from the table's log (delta-rs's FSCK, a commit).

"Moved" in a bucket is a copy to ``{root}/quarantine/delta/{table}/…`` then a delete: nothing is
renamed in a bucket, and a repair cut short between the two leaves the file in both places,
which the next ``check --repair`` finishes. No lock is taken: a checkpoint is a summary any
writer may write, and an FSCK is a commit like any other (a conditional put), so runs committing
meanwhile lose nothing. Each repair is a handful of requests: the copy, the delete, delta-rs's
open and its commit or checkpoint.
"""

from __future__ import annotations

from deltalake import DeltaTable

from stemma.storage import object_roots
from stemma.storage.table_places import TablePlace

QUARANTINE = "quarantine"
"""Where, under the root, a repair moves what it takes out of a table (as on a filesystem)."""


def checkpoint(place: TablePlace) -> str:
    """Repair a long log: a checkpoint of the table at its newest version; say what was done."""
    table = _open(place)
    table.create_checkpoint()
    return f"wrote a checkpoint at version {table.version()}"


def replace_checkpoint(place: TablePlace, name: str) -> str:
    """Repair a damaged checkpoint ``_delta_log/{name}`` whose commits are all in the log."""
    log = f"delta/{place.name}/_delta_log"
    moved = _move_to_quarantine(place, f"{log}/{name}", f"_delta_log/{name}")
    # It names the checkpoint just moved: without it, delta-rs lists the log instead.
    _delete(place, [f"{log}/_last_checkpoint"])
    fresh = _open(place)
    fresh.create_checkpoint()
    return f"moved it to {moved} and wrote a new checkpoint at version {fresh.version()}"


def quarantine_file(place: TablePlace, key: str) -> str:
    """Repair a damaged data file ``key`` (relative to the table): move it out of the table."""
    moved = _move_to_quarantine(place, f"delta/{place.name}/{key}", key.rsplit("/", 1)[-1])
    _open(place).repair()  # drops the file it can no longer find from the log
    return (
        f"moved it to {moved} and dropped it from the table's log; what it recorded runs "
        "again when asked for"
    )


def _open(place: TablePlace) -> DeltaTable:
    return DeltaTable(place.uri, storage_options=place.options)


def _move_to_quarantine(place: TablePlace, key: str, name: str) -> str:
    """Copy ``key`` (under the root) into the quarantine, then delete it; return the copy's URL.

    A file already gone (a repair cut short after its delete) is not copied again.
    """
    root = place.root
    assert root is not None
    import obstore

    target = f"{QUARANTINE}/delta/{place.name}/{name}"
    store = object_roots.object_store(root)
    try:
        obstore.copy(store, key, target)
    except FileNotFoundError:
        pass
    except Exception as err:
        raise object_roots.unreachable(root, err) from err
    _delete(place, [key])
    return f"{root.url}/{target}"


def _delete(place: TablePlace, keys: list[str]) -> None:
    root = place.root
    assert root is not None
    object_roots.delete_objects(root, [f"{root.url}/{key}" for key in keys])
