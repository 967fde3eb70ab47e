"""``stemma check``'s reading of the tables of a root in an object store.

The findings :func:`~stemma.storage.table_check.check_table` makes of a table on a filesystem,
in the same words, each naming the object by its URL: a commit missing after the newest sound
checkpoint, one that does not parse, a checkpoint that does not read, a table delta-rs cannot
open, a data file the log lists that is missing, not Parquet, not the size the log records or
with a footer that does not parse, and a long log since the last checkpoint.

Requests, for a table of F objects (log entries and data files), K commits after its newest
checkpoint and D data files in its current version:

- one listing of the table's prefix (a request per 1,000 objects), which gives every object's
  size: a gap in the log and a missing data file cost nothing more;
- the newest checkpoint's parts looked at as data files are (below); an older one only when a
  newer one does not read;
- the table opened by delta-rs at the version listed (its own listing, ``_last_checkpoint``,
  the checkpoint, and each of the K commits, which it reads twice); only when that fails is
  each of the K commits read again and parsed, to name the one that does not;
- each of the D data files looked at by :func:`~stemma.storage.bucket_parquet.object_problem`:
  one ranged GET (two for a file past 1 MiB; one more for a footer past 64 KiB).

So O(F) requests a table and O(tables + files) for a root, with the listings of
:func:`~stemma.storage.bucket_maintenance.bucket_tables` (one, and one per table group). A
commit before the checkpoint is not read: no reader reads it (on a filesystem, where a read
costs nothing, it is).

Nothing is written to the bucket unless ``--repair`` is given; then the safe repairs a table
on a filesystem gets are made in the bucket (:mod:`stemma.storage.bucket_repairs`): a
checkpoint written, a damaged checkpoint replaced, a damaged file of a table whose rows are
made again by rerunning moved to the root's quarantine. Every other problem's fix says what to
do.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from deltalake import DeltaTable

from stemma.core.store.locations import RootLayout
from stemma.storage import object_roots
from stemma.storage.bucket_maintenance import bucket_tables
from stemma.storage.bucket_parquet import MISSING, object_problem
from stemma.storage.bucket_repairs import checkpoint, quarantine_file, replace_checkpoint
from stemma.storage.check_findings import Problem, Severity
from stemma.storage.damage_signs import cause, is_damage
from stemma.storage.data_files import logged_paths
from stemma.storage.delta_log import commit_versions, complete_checkpoints
from stemma.storage.table_check import (
    CHECKPOINT_AFTER,
    MISSING_COMMIT_MEANWHILE,
    REBUILDABLE,
    is_commit,
    missing_commits,
)
from stemma.storage.table_places import TablePlace

_LOG = "_delta_log/"
_RESTORE = (
    "put it back from a backup of the bucket (or from its previous version, where the bucket "
    "keeps versions)"
)
"""The way back for an object (its URL is on the finding's first line)."""


def check_bucket_tables(layout: RootLayout) -> tuple[int, list[Problem]]:
    """Every table found by listing the bucket root's ``delta/``, checked.

    Returns:
        How many tables there are, and their problems, table by table.

    Raises:
        RootURLError: a request to the store failed (the message names the root).
    """
    tables = 0
    problems: list[Problem] = []
    for place in bucket_tables(layout):
        found = check_bucket_table(layout, place)
        if found is not None:
            tables += 1
            problems += found
    return tables, problems


def damaged_bucket_tables(layout: RootLayout) -> list[str]:
    """The names of the bucket root's tables that cannot be read, the steps table first.

    What :func:`~stemma.storage.table_check.damaged_tables` says of a root on a filesystem.
    """
    found = [
        place.name
        for place in bucket_tables(layout)
        if any(p.severity is Severity.DAMAGED for p in check_bucket_table(layout, place) or [])
    ]
    return sorted(found, key=lambda name: name != "orchestration/steps")


def check_bucket_table(layout: RootLayout, place: TablePlace) -> list[Problem] | None:
    """Every problem of the table at ``place`` (in a bucket); None if no log is there.

    Raises:
        RootURLError: a request to the store failed (the message names the root).
    """
    assert place.root is not None
    from obstore.exceptions import BaseError

    store = object_roots.object_store(place.root)
    try:
        objects = _listed(store, f"delta/{place.name}/")
        log = {
            key.removeprefix(_LOG): size for key, size in objects.items() if key.startswith(_LOG)
        }
        if not log:
            return None  # a prefix, not a table (as a directory without _delta_log/ on disk)
        return _problems(layout, place, store, objects, log)
    except BaseError as err:  # a request the store did not answer (delta-rs's are said apart)
        raise object_roots.unreachable(place.root, err) from err


def _problems(
    layout: RootLayout,
    place: TablePlace,
    store: Any,
    objects: dict[str, int],
    log: dict[str, int],
) -> list[Problem]:
    commits = commit_versions(log)
    sound, problems = _checkpoints(layout, place, store, commits, log)
    for version, what in missing_commits(commits, sound):
        url = f"{place.uri}/{_LOG}{version:020d}.json"
        problems.append(
            Problem(
                severity=Severity.DAMAGED,
                path=url,
                what=what,
                fix=_RESTORE + MISSING_COMMIT_MEANWHILE,
            )
        )
    if problems:
        return problems  # delta-rs would stop at these: opening it says nothing more
    latest = max([*commits, sound if sound is not None else 0])
    try:
        # At the version listed: the data files of a commit made since are not in the listing.
        table = DeltaTable(place.uri, version=latest, storage_options=place.options)
        files = logged_paths(table)
    except BaseException as err:
        if not is_damage(err):
            raise
        # Only now is each commit it replays read: which one does not parse is the news.
        unreadable = [
            _unreadable_commit(place, name)
            for version, name in sorted(commits.items())
            if (sound is None or version > sound) and not _parses(store, place, name)
        ]
        return unreadable or [_unopenable(place, err)]
    for logged, expected in files:
        key = _key(place, logged)
        size = objects.get(key)
        found = MISSING if size is None else object_problem(store, _at(place, key), size, expected)
        if found is not None:
            problems.append(_damaged_file(layout, place, key, found))
    since = max(commits, default=0) - (sound if sound is not None else -1)
    if not problems and since > CHECKPOINT_AFTER:
        problems.append(
            Problem(
                severity=Severity.ATTENTION,
                path=f"{place.uri}/{_LOG}",
                what=f"has {since} commits since its last checkpoint: every open replays them",
                fix=f"`stemma check --repair {layout.shown}` writes a checkpoint",
                repair=lambda: checkpoint(place),
            )
        )
    return problems


def _checkpoints(
    layout: RootLayout, place: TablePlace, store: Any, commits: dict[int, str], log: dict[str, int]
) -> tuple[int | None, list[Problem]]:
    """The newest checkpoint that reads (delta-rs opens from it), and each newer one that does not.

    Looked at newest first, down to the first that reads: the older ones are not read.
    """
    damaged: list[tuple[int, str, str]] = []
    sound: int | None = None
    for version, names in sorted(complete_checkpoints(log).items(), reverse=True):
        found = _first_unsound(store, place, names, log)
        if found is None:
            sound = version
            break
        damaged.append((version, *found))
    return sound, [
        _damaged_checkpoint(layout, place, version, name, said, commits, sound)
        for version, name, said in damaged
    ]


def _first_unsound(
    store: Any, place: TablePlace, names: list[str], log: dict[str, int]
) -> tuple[str, str] | None:
    """The first part of a checkpoint that does not read, and what is wrong with it."""
    for name in names:
        said = object_problem(store, _at(place, _LOG + name), log[name], None)
        if said is not None:
            return name, said
    return None


def _damaged_checkpoint(
    layout: RootLayout,
    place: TablePlace,
    version: int,
    name: str,
    said: str,
    commits: dict[int, str],
    sound: int | None,
) -> Problem:
    url = f"{place.uri}/{_LOG}{name}"
    first = 0 if sound is None else sound + 1
    if all(v in commits for v in range(first, version + 1)):
        return Problem(
            severity=Severity.DAMAGED,
            path=url,
            what=f"{said}: the table is opened from this checkpoint, so it cannot be",
            fix=f"`stemma check --repair {layout.shown}` moves it aside and writes a new one "
            "(every commit it sums up is still in the log)",
            repair=lambda: replace_checkpoint(place, name),
        )
    return Problem(
        severity=Severity.DAMAGED,
        path=url,
        what=f"{said}, and the commits it sums up are no longer all in the log",
        fix=_RESTORE + "; there is no safe repair without it",
    )


def _unreadable_commit(place: TablePlace, name: str) -> Problem:
    url = f"{place.uri}/{_LOG}{name}"
    return Problem(
        severity=Severity.DAMAGED,
        path=url,
        what="is not a readable log entry (not JSON lines)",
        fix=_RESTORE + "; there is no safe repair without it",
    )


def _unopenable(place: TablePlace, error: BaseException) -> Problem:
    url = f"{place.uri}/{_LOG}"
    return Problem(
        severity=Severity.DAMAGED,
        path=url,
        what=f"cannot be opened: {cause(error)}",
        fix=_RESTORE + " (the whole _delta_log/ prefix)",
    )


def _damaged_file(layout: RootLayout, place: TablePlace, key: str, problem: str) -> Problem:
    url = f"{place.uri}/{key}"
    if place.name in REBUILDABLE:
        return Problem(
            severity=Severity.DAMAGED,
            path=url,
            what=f"{problem}: the table {place.name} cannot be read",
            fix=_RESTORE + f", or `stemma check --repair {layout.shown}` moves it out of the "
            "table (the units whose rows it held run again when next asked for)",
            repair=lambda: quarantine_file(place, key),
        )
    return Problem(
        severity=Severity.DAMAGED,
        path=url,
        what=f"{problem}: the table {place.name} cannot be read, and its rows are nowhere else",
        fix=_RESTORE + "; there is no safe repair without it (see 'When something is "
        "damaged' in the docs for dropping the file and its rows)",
    )


def _parses(store: Any, place: TablePlace, name: str) -> bool:
    import obstore

    try:
        data = obstore.get(store, _at(place, _LOG + name)).bytes()
    except FileNotFoundError:  # removed since the listing (log cleanup after a checkpoint)
        return True
    return is_commit(bytes(data))


def _listed(store: Any, prefix: str) -> dict[str, int]:
    """Every object under ``prefix``, by its key relative to it, with its size."""
    import obstore

    return {
        str(meta["path"]).removeprefix(prefix): int(meta["size"])
        for batch in obstore.list(store, prefix)
        for meta in batch
    }


def _key(place: TablePlace, logged: str) -> str:
    """A data file's path as the log says it (URL-escaped; rarely a whole URI), as a key."""
    path = logged.removeprefix(f"{place.uri}/")
    return unquote(path) if "%" in path else path


def _at(place: TablePlace, key: str) -> str:
    return f"delta/{place.name}/{key}"
