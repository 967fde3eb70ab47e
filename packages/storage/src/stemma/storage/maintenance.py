"""Keeping a root small: compact its Delta tables, then vacuum what nothing references.

Every stemma commit appends one small Parquet file per table, so a busy root holds thousands of
tiny files and every query opens each of them. :func:`compact_root` rewrites each table's small
files into a few large ones and writes a checkpoint, so readers replay a short log. Compaction
removes nothing from disk: the old files stay, marked removed, so a reader that opened the
previous version keeps working. :func:`vacuum_root` then deletes those, the commit log entries
before each table's newest checkpoint (:mod:`stemma.storage.delta_log`), and the other files
stemma leaves behind (:mod:`stemma.storage.leftovers`), once they are older than a retention.

Both hold each table's writer lock (the one every stemma append holds), so they never race a
commit of this root's runners.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from deltalake import DeltaTable

from stemma.core.crash_points import crash_point
from stemma.core.file_lock import FileLock
from stemma.core.live import RunStatus, list_states
from stemma.core.store.locations import RootLayout, resolve_root
from stemma.storage.bucket_maintenance import compact_tables, vacuum_tables
from stemma.storage.data_files import check_data_files
from stemma.storage.delta_log import expired_log_entries, remove_log_entries
from stemma.storage.errors import StorageError
from stemma.storage.kept_contents import remove_unreferenced, unreferenced
from stemma.storage.leftovers import Removal, leftovers, remove
from stemma.storage.object_roots import delete_objects
from stemma.storage.tables import WRITER_PROPERTIES, post_commit_hooks
from stemma.storage.written_outputs import stale_attempts

DEFAULT_RETAIN_HOURS = 168
"""Files younger than a week are kept by default (Delta's own default retention)."""
MIN_RETAIN_HOURS = 1
"""The shortest retention :func:`vacuum_root` accepts unless told otherwise.

stemma's readers re-open a table's newest version before every read and its writers commit a
data file within seconds of writing it, so an hour leaves a wide margin; a notebook holding an
older version open needs the retention raised, never lowered."""


class MaintenanceError(StorageError, ValueError):
    """A compaction or vacuum was refused before anything was changed (the message says why)."""


class LiveRunError(MaintenanceError):
    """A run is live on the root, and vacuuming it could remove files that run still needs."""


@dataclass(frozen=True, kw_only=True)
class Compaction:
    """What compacting one table did."""

    table: str
    """The table's name under ``delta/`` (``artifacts/index``, ``orchestration/steps``…)."""
    files_before: int
    """Data files the table's newest version referenced before."""
    files_after: int
    """Data files it references now (the rows are the same)."""


@dataclass(frozen=True, kw_only=True)
class VacuumReport:
    """What :func:`vacuum_root` removed, or with ``applied=False`` would remove."""

    applied: bool
    """Whether the files were deleted (``False``: a dry run, nothing changed)."""
    retain_hours: int
    """Nothing younger than this was touched."""
    removals: tuple[Removal, ...]
    """Every file or directory removed (or to remove), tables' files first."""
    log_entries: tuple[Removal, ...] = ()
    """The tables' commit log entries removed (or to remove): those before each table's newest
    checkpoint, of kind ``log {table}``; every table still reads from that checkpoint."""

    @property
    def bytes(self) -> int:
        """Bytes freed (or that would be freed) by :attr:`removals`."""
        return sum(removal.size for removal in self.removals)

    @property
    def log_bytes(self) -> int:
        """Bytes freed (or that would be freed) by :attr:`log_entries`."""
        return sum(entry.size for entry in self.log_entries)


def delta_tables(layout: RootLayout) -> list[tuple[str, Path]]:
    """Every Delta table under ``delta/`` as ``(name, path)``, user content tables included."""
    if not layout.delta.is_dir():
        return []
    found = [log.parent for log in layout.delta.rglob("_delta_log") if log.is_dir()]
    return sorted((path.relative_to(layout.delta).as_posix(), path) for path in found)


def table_lock(layout: RootLayout, name: str) -> FileLock:
    """The writer lock of table ``name``: the same file ``locks.table_lock_path`` names."""
    return FileLock(layout.locks / "delta" / f"{name.replace('/', '.')}.lock")


def compact_root(
    root: str | Path | None = None, *, target_size: int | None = None
) -> list[Compaction]:
    """Compact every table of the root into large files and checkpoint its log.

    Safe while runs are live: each table is compacted under its writer lock, and the replaced
    files stay on disk for readers of older versions until :func:`vacuum_root` removes them.

    Args:
        root: the stemma root (default: ``$STEMMA_ROOT``, else ``.stemma``).
        target_size: the file size to aim for, in bytes (default: the table's
            ``delta.targetFileSize``, else 100 MB).

    Returns:
        One :class:`Compaction` per table, in name order.
    """
    layout = RootLayout(resolve_root(root))
    if layout.store is not None:  # tables in a bucket
        return [
            Compaction(table=name, files_before=before, files_after=after)
            for name, before, after in compact_tables(layout, target_size)
        ]
    done: list[Compaction] = []
    for name, path in delta_tables(layout):
        with table_lock(layout, name):
            table = DeltaTable(path)
            check_data_files(layout, name, table)  # before delta-rs reads them to rewrite them
            before = len(table.file_uris())
            table.optimize.compact(
                target_size=target_size,
                writer_properties=WRITER_PROPERTIES,
                post_commithook_properties=post_commit_hooks(table),
            )
            crash_point(f"delta.compacted.{_point(name)}")
            table.create_checkpoint()  # readers replay the log from here, not from version 0
            crash_point(f"delta.checkpoint.{_point(name)}")
            after = len(table.file_uris())
        done.append(Compaction(table=name, files_before=before, files_after=after))
    return done


def vacuum_root(
    root: str | Path | None = None,
    *,
    retain_hours: int = DEFAULT_RETAIN_HOURS,
    apply: bool = False,
    force: bool = False,
    min_retain_hours: int = MIN_RETAIN_HOURS,
) -> VacuumReport:
    """Remove what nothing references any more and is older than ``retain_hours``.

    That is: table files that compaction replaced (or that a failed commit left), each table's
    commit log entries before its newest checkpoint, content files no artifact refers to (kept
    for units never committed), what steps that died wrote under ``OUT_URL`` in a bucket
    (``_stemma/attempts/``), preserved working directories, quarantined
    staging bundles and logs. Without ``apply`` nothing is deleted and the report lists what
    would be.

    Args:
        root: the stemma root (default: ``$STEMMA_ROOT``, else ``.stemma``).
        retain_hours: keep everything younger than this.
        apply: delete; without it this is a dry run.
        force: go on even while a run is live on the root (its working directories and
            scheduler logs are then left alone).
        min_retain_hours: the shortest ``retain_hours`` accepted; lower it only on a root no
            one else reads.

    Raises:
        MaintenanceError: ``retain_hours`` is below ``min_retain_hours``.
        LiveRunError: a run is live on the root and ``force`` is not set.
    """
    if retain_hours < min_retain_hours:
        raise MaintenanceError(
            f"a retention of {retain_hours} hours (retain_hours, --retain-hours) is below the "
            f"minimum of {min_retain_hours}: a reader of an older table version could lose its "
            f"files; give {min_retain_hours} or more"
        )
    layout = RootLayout(resolve_root(root))
    live = [s.run_id for s in list_states(layout.root) if s.status is RunStatus.RUNNING]
    if live and not force:
        raise LiveRunError(
            f"run {', '.join(live)} is live on {layout.root}: wait for it to end (`stemma watch "
            f"{live[0]}`), stop it (`stemma cancel {live[0]}`), or vacuum anyway with --force"
        )
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(hours=retain_hours)
    removals: list[Removal] = []
    log_entries: list[Removal] = []
    if layout.store is not None:  # tables in a bucket; their logs are delta-rs's to trim
        removals += vacuum_tables(layout, retain_hours, apply=apply)
    for name, path in delta_tables(layout):
        with table_lock(layout, name):
            removals += _table_files(name, path, retain_hours, apply=apply)
            # after the files: vacuuming commits to the log, and may write a checkpoint
            log_entries += _log_entries(name, path, cutoff, apply=apply)
    others = leftovers(layout, cutoff, live_run_ids=frozenset(live))
    contents = unreferenced(layout, cutoff)
    attempts = stale_attempts(layout, cutoff)
    if apply:
        remove(layout, others)
        remove_unreferenced(layout, contents)
        if layout.store is not None:
            delete_objects(layout.store, [str(removal.path) for removal in attempts])
    return VacuumReport(
        applied=apply,
        retain_hours=retain_hours,
        removals=(*removals, *others, *contents, *attempts),
        log_entries=tuple(log_entries),
    )


def _log_entries(name: str, path: Path, cutoff: dt.datetime, *, apply: bool) -> list[Removal]:
    """The table's log entries before its newest checkpoint and older than ``cutoff``.

    A reader of an older version catching up needs the commits after it; one older than the
    retention is a reader that has not looked for that long, as with the files vacuum removes.
    """
    expired = expired_log_entries(path, cutoff.timestamp())
    if apply and expired:
        remove_log_entries(expired)
        crash_point(f"delta.log_cleaned.{_point(name)}")
    return [Removal(kind=f"log {name}", path=entry.path, size=entry.size) for entry in expired]


def _table_files(name: str, path: Path, retain_hours: int, *, apply: bool) -> list[Removal]:
    table = DeltaTable(path)
    # full: also files no commit references (a commit that lost a conflict leaves its data file
    # behind); their age is their modification time, so a file being written for a commit in
    # flight is always younger than the retention.
    listed = table.vacuum(
        retention_hours=retain_hours, dry_run=True, enforce_retention_duration=False, full=True
    )
    sizes = {relative: _size(path / relative) for relative in listed}
    # delta-rs lists every expired tombstone whether its file is there or not (a tombstone stays
    # in the log until a checkpoint past the table's deleted-file retention, a week, drops it):
    # a file an earlier vacuum removed is no removal, and a vacuum of nothing but such files
    # would commit its start and end to the log for nothing.
    gone = {relative for relative, size in sizes.items() if size is None}
    if apply and set(listed) - gone:
        listed = table.vacuum(
            retention_hours=retain_hours, dry_run=False, enforce_retention_duration=False, full=True
        )
        crash_point(f"delta.vacuumed.{_point(name)}")
    return [
        Removal(kind=f"table {name}", path=path / relative, size=sizes.get(relative) or 0)
        for relative in sorted(set(listed) - gone)
    ]


def _size(path: Path) -> int | None:
    """The file's size; ``None`` when it is not there."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None
    except OSError:
        return 0


def _point(table: str) -> str:
    """A table's name as a crash point's part (``orchestration.steps``)."""
    return table.replace("/", ".")
