"""Checking one Delta table: its log, its checkpoints and every data file its log lists.

The log is read as files first (which commits are there, does each parse), because a gap in it
stops delta-rs from opening the table at all, and the gap is what the user must be told about.
Only then is the table opened and each data file it references checked (present, a Parquet
footer that parses), which is what a query would trip over.

The repairs offered here are the ones that lose nothing that cannot come back:

- a checkpoint written for a table with a long log (reads replay less; no row changes);
- a damaged or missing data file of a table whose rows say only *what ran*
  (:data:`REBUILDABLE`): the file is moved to ``{root}/quarantine/delta/…`` and dropped from the
  table's log, and the units whose rows it held run again the next time they are asked for.

A missing commit, or a damaged file of a table holding artifacts, lineage or step outputs, has
no safe repair: its rows exist nowhere else. Those are named with the file and the way back (a
backup), and left alone.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Collection
from pathlib import Path

import pyarrow.parquet as pq
from deltalake import DeltaTable
from pyarrow import ArrowException

from stemma.core.store.locations import RootLayout
from stemma.core.store.parquet_marks import parquet_marks_problem
from stemma.storage.check_findings import Problem, Severity, relative
from stemma.storage.damage_signs import cause, is_damage
from stemma.storage.data_files import logged_files
from stemma.storage.maintenance import delta_tables, table_lock

REBUILDABLE = frozenset({"orchestration/executions", "orchestration/steps"})
"""Tables whose lost rows only make work run again: an execution row lost is a cache miss, a
step event lost a step looked up again (its units then hit the execution cache)."""
CHECKPOINT_AFTER = 100
"""Commits since the last checkpoint past which a table is worth checkpointing."""
QUARANTINE = "quarantine"
"""``{root}/quarantine/delta/{table}/``: where damaged data files are moved, never deleted."""


def check_table(layout: RootLayout, name: str, path: Path) -> list[Problem]:
    """Every problem of the table ``name`` at ``path``, each with its file and fix."""
    log = path / "_delta_log"
    commits = {int(p.name[:20]): p for p in log.glob("*.json") if p.name[:20].isdigit()}
    checkpoint = _last_checkpoint(log)
    problems = [_unreadable_commit(layout, p) for p in commits.values() if not _parses(p)]
    problems.extend(_gaps(layout, log, commits, checkpoint))
    problems.extend(_damaged_checkpoints(layout, name, path, commits, checkpoint))
    if problems:
        return problems  # delta-rs would stop at these: opening it says nothing more
    try:
        files = logged_files(DeltaTable(path), path)
    except BaseException as err:
        if not is_damage(err):
            raise
        return [_unopenable(layout, log, err)]
    for file, size in files:
        found = _data_file_problem(Path(file), size)
        if found is not None:
            problems.append(_damaged_file(layout, name, path, Path(file), found))
    since = max(commits, default=0) - (checkpoint if checkpoint is not None else -1)
    if not problems and since > CHECKPOINT_AFTER:
        problems.append(
            Problem(
                severity=Severity.ATTENTION,
                path=log,
                what=f"has {since} commits since its last checkpoint: every open replays them",
                fix=f"`stemma check --repair {layout.root}` writes a checkpoint",
                repair=lambda: _checkpoint(layout, name, path),
            )
        )
    return problems


def damaged_tables(layout: RootLayout) -> list[str]:
    """The names of the tables that cannot be read, the steps table first (read most)."""
    found = [
        name
        for name, path in delta_tables(layout)
        if any(p.severity is Severity.DAMAGED for p in check_table(layout, name, path))
    ]
    return sorted(found, key=lambda name: name != "orchestration/steps")


def _parses(commit: Path) -> bool:
    try:
        return is_commit(commit.read_bytes())
    except OSError:
        return False


def is_commit(data: bytes) -> bool:
    """Whether ``data`` reads as a log entry: JSON lines (blank lines aside)."""
    try:
        for line in data.decode("utf-8").splitlines():
            if line.strip():
                json.loads(line)
    except ValueError:  # (UnicodeDecodeError is one)
        return False
    return True


def _last_checkpoint(log: Path) -> int | None:
    """The newest checkpoint whose file has a Parquet footer (delta-rs skips to it)."""
    versions: list[int] = []
    for file in log.glob("*.checkpoint*.parquet"):
        if file.name[:20].isdigit() and _data_file_problem(file) is None:
            versions.append(int(file.name[:20]))
    return max(versions, default=None)


def _damaged_checkpoints(
    layout: RootLayout, name: str, path: Path, commits: dict[int, Path], sound: int | None
) -> list[Problem]:
    """Checkpoints newer than the newest sound one that do not read (delta-rs opens from them).

    One is safely replaced when every commit it sums up is still in the log: moved aside, the
    table opens from those commits, and a new checkpoint is written.
    """
    problems: list[Problem] = []
    for file in sorted((path / "_delta_log").glob("*.checkpoint*.parquet")):
        version = int(file.name[:20]) if file.name[:20].isdigit() else -1
        found = _data_file_problem(file)
        if found is None or version <= (sound if sound is not None else -1):
            continue
        first = 0 if sound is None else sound + 1
        if all(v in commits for v in range(first, version + 1)):
            problems.append(
                Problem(
                    severity=Severity.DAMAGED,
                    path=file,
                    what=f"{found}: the table is opened from this checkpoint, so it cannot be",
                    fix=f"`stemma check --repair {layout.root}` moves it aside and writes a new "
                    "one (every commit it sums up is still in the log)",
                    repair=lambda file=file: _replace_checkpoint(layout, name, path, file),
                )
            )
        else:
            problems.append(
                Problem(
                    severity=Severity.DAMAGED,
                    path=file,
                    what=f"{found}, and the commits it sums up are no longer all in the log",
                    fix=_restore(layout, file) + "; there is no safe repair without it",
                )
            )
    return problems


def _gaps(
    layout: RootLayout, log: Path, commits: dict[int, Path], checkpoint: int | None
) -> list[Problem]:
    """The commits missing after the last checkpoint (before it, nothing reads them)."""
    problems: list[Problem] = []
    for version, what in missing_commits(commits, checkpoint):
        file = log / f"{version:020d}.json"
        problems.append(
            Problem(
                severity=Severity.DAMAGED,
                path=file,
                what=what,
                fix=_restore(layout, file) + MISSING_COMMIT_MEANWHILE,
            )
        )
    return problems


MISSING_COMMIT_MEANWHILE = (
    "; there is no safe repair without it. Meanwhile every run keeps its work staged, and "
    "commits it once the file is back"
)
"""What a missing commit's fix says after the way back, on any root."""


def missing_commits(commits: Collection[int], checkpoint: int | None) -> list[tuple[int, str]]:
    """The commit versions missing after ``checkpoint`` (before it, nothing reads them).

    Returns:
        Each missing version, with what is wrong in words (the commits either side named).
    """
    first = 0 if checkpoint is None else checkpoint + 1
    present = sorted(v for v in commits if v >= first)
    if not present:
        return []
    found: list[tuple[int, str]] = []
    for version in (v for v in range(first, present[-1]) if v not in commits):
        after = min(v for v in present if v > version)
        before = max((v for v in commits if v < version), default=None)
        there = f"commit {after} is" if before is None else f"commits {before} and {after} are"
        found.append((version, f"is missing ({there} there): nothing of this table can be read"))
    return found


def _unreadable_commit(layout: RootLayout, commit: Path) -> Problem:
    return Problem(
        severity=Severity.DAMAGED,
        path=commit,
        what="is not a readable log entry (not JSON lines)",
        fix=_restore(layout, commit) + "; there is no safe repair without it",
    )


def _unopenable(layout: RootLayout, log: Path, error: BaseException) -> Problem:
    return Problem(
        severity=Severity.DAMAGED,
        path=log,
        what=f"cannot be opened: {cause(error)}",
        fix=_restore(layout, log) + " (the whole _delta_log directory)",
    )


def _data_file_problem(file: Path, expected_size: int | None = None) -> str | None:
    """What is wrong with a Parquet file: missing, unreadable, not Parquet; None if sound.

    ``expected_size``: the size the table's log records for a data file; another is damage.
    """
    found = parquet_marks_problem(file, expected_size)
    if found is not None:
        return found
    try:
        pq.read_metadata(file)  # pyright: ignore[reportUnknownMemberType]
    except (OSError, ArrowException):
        return f"has a damaged Parquet footer ({file.stat().st_size} bytes)"
    return None


def _damaged_file(layout: RootLayout, name: str, table: Path, file: Path, problem: str) -> Problem:
    if name in REBUILDABLE:
        return Problem(
            severity=Severity.DAMAGED,
            path=file,
            what=f"{problem}: the table {name} cannot be read",
            fix=f"put it back from a backup, or `stemma check --repair {layout.root}` moves it "
            "out of the table (the units whose rows it held run again when next asked for)",
            repair=lambda: _quarantine_file(layout, name, table, file),
        )
    return Problem(
        severity=Severity.DAMAGED,
        path=file,
        what=f"{problem}: the table {name} cannot be read, and its rows are nowhere else",
        fix=_restore(layout, file) + "; there is no safe repair without it (see "
        "'When something is damaged' in the docs for dropping the file and its rows)",
    )


def _restore(layout: RootLayout, path: Path) -> str:
    where = relative(path, layout.root)
    return f"put it back from a backup of the root: `cp -a BACKUP/{where} {path}`"


def _checkpoint(layout: RootLayout, name: str, path: Path) -> str:
    with table_lock(layout, name):
        table = DeltaTable(path)
        table.create_checkpoint()
    return f"wrote a checkpoint at version {table.version()}"


def _replace_checkpoint(layout: RootLayout, name: str, table: Path, file: Path) -> str:
    """Move a damaged checkpoint aside, let the table open from its commits, checkpoint anew."""
    log = table / "_delta_log"
    target = layout.root / QUARANTINE / "delta" / name / "_delta_log" / file.name
    with table_lock(layout, name):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(file, target)
        # It names the checkpoint just moved: without it, delta-rs lists the log instead.
        (log / "_last_checkpoint").unlink(missing_ok=True)
        fresh = DeltaTable(table)
        fresh.create_checkpoint()
    where = relative(target, layout.root)
    return f"moved it to {where} and wrote a new checkpoint at version {fresh.version()}"


def _quarantine_file(layout: RootLayout, name: str, table: Path, file: Path) -> str:
    """Move ``file`` out of the table, then drop it from the log (delta-rs's FSCK)."""
    target = layout.root / QUARANTINE / "delta" / name / file.name
    with table_lock(layout, name):  # no writer appends between the move and the FSCK
        moved = file.exists()
        if moved:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(file, target)
        DeltaTable(table).repair()
    where = f"moved it to {relative(target, layout.root)} and " if moved else ""
    return f"{where}dropped it from the table's log; what it recorded runs again when asked for"
