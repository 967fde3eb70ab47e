"""A Delta table's commit log: its checkpoints, and the entries no reader needs any more.

Every commit adds a file to ``_delta_log/``, and every hundred commits
(:data:`~stemma.storage.tables.CHECKPOINT_INTERVAL`) a checkpoint sums up the table as of then. A
reader starts from the newest checkpoint and replays only the commits after it, so what comes
before is history: time travel to an older version (stemma never does it) and nothing else.
:func:`expired_log_entries` lists that history once it is older than a retention, and
:func:`remove_log_entries` deletes it.

Kept, whatever their age: the newest complete checkpoint, every commit after it, and
``_last_checkpoint``; so the table reads the same rows afterwards, and its application
transactions (what makes stemma's commits idempotent) are all in that checkpoint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

_VERSIONED = re.compile(r"^(\d{20})\.")
"""Commit files, checkpoints (classic, multi-part, v2), checksums, compacted logs: ``{v:020}.…``."""
_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?(?:\.[^.]+)?\.parquet$")
_ABANDONED_COMMIT = re.compile(r"^_commit_[0-9a-f-]+\.json\.tmp$")
"""A commit delta-rs was writing when its process died: never renamed into place, never read."""


@dataclass(frozen=True, kw_only=True)
class LogEntry:
    """One file of ``_delta_log/`` that is history, not state."""

    path: Path
    """Where it is, absolute."""
    size: int
    """Its bytes."""


def newest_checkpoint(log: Path, names: Sequence[str] | None = None) -> int | None:
    """The version of the newest complete checkpoint in ``log`` (``_delta_log/``), or None.

    Listed rather than taken from ``_last_checkpoint``, which a crash can leave pointing at an
    older checkpoint (or at none); a multi-part checkpoint counts only with all its parts. If
    ``_last_checkpoint`` names an older one, that one is the answer: a reader starts its listing
    from the version it names, so that checkpoint and what follows it must stay.

    Args:
        log: the table's ``_delta_log`` directory.
        names: its file names, when the caller has listed it already.
    """
    complete = complete_checkpoints(names if names is not None else _names(log))
    newest = max(complete, default=None)
    hinted = _last_checkpoint_version(log)
    if newest is not None and hinted is not None and hinted in complete:
        return min(newest, hinted)
    return newest


def complete_checkpoints(names: Iterable[str]) -> dict[int, list[str]]:
    """The complete checkpoints among a log's file ``names``: each version, with its files.

    A multi-part checkpoint counts only with all its parts (a crash can leave some written).
    """
    parts: dict[int, list[str]] = {}
    complete: dict[int, list[str]] = {}
    for name in names:
        found = _CHECKPOINT.match(name)
        if found is None:
            continue
        version, part, total = found.groups()
        if part is None:
            complete[int(version)] = [name]
            continue
        seen = parts.setdefault(int(version), [])
        seen.append(name)
        if len(seen) == int(total):
            complete[int(version)] = sorted(seen)
    return complete


def commit_versions(names: Iterable[str]) -> dict[int, str]:
    """The commit files among a log's file ``names``, by version."""
    return {int(found.group(1)): name for name in names if (found := _COMMIT.match(name))}


def commits_since_checkpoint(table: Path) -> int:
    """How many commit files a reader of ``table`` replays after its newest checkpoint."""
    log = table / "_delta_log"
    names = _names(log)
    start = newest_checkpoint(log, names)
    floor = -1 if start is None else start
    return sum(1 for version in commit_versions(names) if version > floor)


def expired_log_entries(table: Path, cutoff: float) -> list[LogEntry]:
    """The log files of ``table`` before its newest checkpoint, last written before ``cutoff``.

    Also abandoned commit files (``_commit_….json.tmp``) older than ``cutoff``. A table without
    a checkpoint has none: every commit file is still needed to read it.

    Args:
        table: the table's directory (the one holding ``_delta_log/``).
        cutoff: a POSIX time; files modified at or after it are kept.
    """
    log = table / "_delta_log"
    names = _names(log)
    keep_from = newest_checkpoint(log, names)
    found: list[LogEntry] = []
    for name in sorted(names):
        versioned = _VERSIONED.match(name)
        if versioned is not None:
            expired = keep_from is not None and int(versioned.group(1)) < keep_from
        else:
            expired = _ABANDONED_COMMIT.match(name) is not None
        if not expired:
            continue
        try:
            stat = (log / name).stat()
        except FileNotFoundError:  # removed meanwhile (by delta-rs's own cleanup)
            continue
        if stat.st_mtime < cutoff:
            found.append(LogEntry(path=log / name, size=stat.st_size))
    return found


def remove_log_entries(entries: Iterable[LogEntry]) -> None:
    """Delete ``entries``, oldest version first, so an interrupted removal leaves no gap.

    A reader lists the log from its newest checkpoint on; were a removal to stop half-way, the
    files left are still a contiguous run of versions ending at that checkpoint.
    """
    for entry in sorted(entries, key=lambda entry: entry.path.name):
        entry.path.unlink(missing_ok=True)


def _last_checkpoint_version(log: Path) -> int | None:
    try:
        hint: object = json.loads((log / "_last_checkpoint").read_text())
    except (OSError, ValueError):  # none yet, or torn: readers then list the whole log
        return None
    version = hint.get("version") if isinstance(hint, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return version if isinstance(version, int) else None


def _names(log: Path) -> list[str]:
    try:
        return [entry.name for entry in log.iterdir()]
    except FileNotFoundError:
        return []
