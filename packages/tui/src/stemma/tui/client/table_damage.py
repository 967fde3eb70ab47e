"""Which Delta table of a root is damaged, which file, and what a user can do about it now.

A read that fails on a damaged table says little: polars reports "expected parquet magic bytes"
without the file, delta-rs a gap in the log inside a long debug dump. The dashboard says it
once, so it says it well: :func:`find_damage` reads the error's own words first (a missing
commit, a missing data file) and otherwise checks each data file the tables' logs reference
(a Parquet file starts and ends with ``PAR1``, and is the size the log records), naming the first
that is not one.

delta-rs is imported only when a read already failed: never on the paint path.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stemma.core.store.parquet_marks import parquet_marks_problem

DAMAGE_RETRY_SECONDS = 10.0
"""How often a damaged history is read again, to notice that it was fixed."""
STILL_SHOWN = "Runs with a state file are still shown."
"""What the runs list goes on showing while the history is damaged."""
_GAP = re.compile(
    r'found gap: .*?path: "(?P<log>[^"]+)/_delta_log/(?P<before>\d+)\.json".*?'
    r'-> ParsedLogPath.*?filename: "(?P<after>\d+)\.json"',
    re.DOTALL,
)
_DATA_FILE = re.compile(r"(part-[\w.-]+?\.parquet)")


@dataclass(frozen=True, kw_only=True)
class TableDamage:
    """One damaged file of one Delta table, and the way out."""

    table: Path
    """The table's directory (``{root}/delta/orchestration/steps``)."""
    file: str
    """The damaged or missing file, relative to the table's directory."""
    problem: str
    """What is wrong with it, in words."""
    fix: str
    """What a user can do now."""

    def message(
        self, root: Path, still_shown: str = "Runs with a state file are still shown."
    ) -> str:
        """One paragraph: the table, the file, the problem, the fix, then what is still shown.

        The most useful words first: a narrow screen's summary line cuts the end.
        """
        table = _relative(self.table, root)
        tail = f" {still_shown}" if still_shown else ""
        return f"damaged table {table}: {self.file} {self.problem}. Fix: {self.fix}.{tail}"


class DamageWatch:
    """Whether a root's history can be read, and if not, which file of which table stops it.

    A damaged table is read again only every :data:`DAMAGE_RETRY_SECONDS` (to notice the fix),
    not at every refresh: each try reads files and looks for the damaged one again.
    """

    def __init__(self, root: Path, retry_seconds: float = DAMAGE_RETRY_SECONDS) -> None:
        self._root = root
        self._retry_seconds = retry_seconds
        self._retry_at = 0.0
        self.damage: TableDamage | None = None
        """The damage found by the last read (None when it read)."""

    def message(self) -> str | None:
        """The damage in one paragraph (:meth:`TableDamage.message`), or None."""
        return self.damage.message(self._root) if self.damage is not None else None

    def readable(self, catch_up: Callable[[], object]) -> bool:
        """Run ``catch_up`` (a history read); False, with :attr:`damage` set, if it met damage.

        Raises:
            Exception: a failed read that no damaged file explains (a bug, a full disk).
        """
        if self.damage is not None and time.monotonic() < self._retry_at:
            return False
        try:
            catch_up()
        except BaseException as err:  # polars, delta-rs and OSError all say "damaged" their own way
            damage = find_damage(self._root, err) if read_failed(err) else None
            if damage is None:
                raise
            self.damage, self._retry_at = damage, time.monotonic() + self._retry_seconds
            return False
        self.damage = None
        return True


def read_failed(error: BaseException) -> bool:
    """Whether ``error`` is a read's failure, to be said, rather than an interrupt to let through.

    A Rust panic inside polars or delta-rs (a truncated Parquet file) arrives as pyo3's
    ``PanicException``, which derives from ``BaseException``: ``except Exception`` let it through,
    and the reading thread died without a word, leaving its screen at "loading…".
    """
    return isinstance(error, Exception) or type(error).__name__ == "PanicException"


def find_damage(root: Path, error: BaseException) -> TableDamage | None:
    """The damaged file behind ``error``, a failed read of ``root``'s tables; None if none is.

    None means the error is something else (a bug, a full disk): the caller raises it on.
    """
    text = f"{error} {error.__cause__ or ''}"  # a DamagedTableError: delta-rs's words below
    gap = _GAP.search(text)
    if gap is not None:
        return _missing_commit(Path(gap["log"]), int(gap["before"]), int(gap["after"]))
    named = _DATA_FILE.search(text)
    for table in _tables(root):
        found = _check_files(table, named[1] if named else None)
        if found is not None:
            return found
    return None


def _missing_commit(table: Path, before: int, after: int) -> TableDamage:
    missing = ", ".join(f"_delta_log/{v:020d}.json" for v in range(before + 1, after))
    return TableDamage(
        table=table,
        file=missing,
        problem=f"is missing (commits {before} and {after} are there, not what is between)",
        fix=f"put {missing} back from a backup: Delta reads no table past a missing commit "
        f"(`stemma check {_root_of(table)}` says more)",
    )


def _tables(root: Path) -> list[Path]:
    """The Delta tables under ``root``, the steps table first (the one read every second)."""
    delta = root / "delta"
    found = sorted(log.parent for log in delta.glob("*/*/_delta_log") if log.is_dir())
    return sorted(found, key=lambda table: table.name != "steps")


def _check_files(table: Path, named: str | None) -> TableDamage | None:
    from deltalake import DeltaTable

    from stemma.storage.data_files import logged_files  # only once a read failed

    try:
        files = logged_files(DeltaTable(str(table)), table)
    except Exception as err:  # its log itself is damaged: a gap names it
        gap = _GAP.search(str(err))
        return _missing_commit(table, int(gap["before"]), int(gap["after"])) if gap else None
    if named is not None:  # the error named it: look at that one first
        files.sort(key=lambda file: Path(file[0]).name != named)
    for file, size in files:
        path = Path(file)
        problem = parquet_marks_problem(path, size)
        if problem is not None:
            return TableDamage(
                table=table,
                file=_relative(path, table),
                problem=problem,
                fix=_drop_file_fix(table),
            )
    return None


def _drop_file_fix(table: Path) -> str:
    """The fix ``stemma check`` gives: ``--repair`` where rows only record what ran."""
    from stemma.storage.table_check import REBUILDABLE  # only once a read failed

    root = _root_of(table)
    name = table.relative_to(root / "delta").as_posix()
    if name in REBUILDABLE:
        return f"`stemma check --repair {root}` moves it out (its work runs again when asked)"
    return f"put it back from a backup (`stemma check {root}` says how)"


def _root_of(table: Path) -> Path:
    """The stemma root a table's directory is in: the parent of its ``delta`` directory."""
    return next((p.parent for p in table.parents if p.name == "delta"), table.parent)


def _relative(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)
