"""Turning a failed read of a damaged Delta table into one error that names it and the way out.

delta-rs and polars say "damaged" each their own way: a gap in the log is a ``DeltaError`` with
a long debug dump, a data file that is not Parquet a Rust panic (pyo3's ``PanicException``, a
``BaseException``) or a polars ``ComputeError``, a data file gone an ``OSError``. Each becomes a
:class:`~stemma.storage.errors.DamagedTableError` naming the table and ``stemma check``, which
finds the file and says the fix (:mod:`stemma.storage.root_check`).

Anything else goes through untouched: an interrupt, a bug, a full disk. Only a failure that a
damaged file explains is translated: delta-rs named the gap, or a check of the table
(:func:`~stemma.storage.table_check.check_table`, on the error path only) finds the file.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote

import polars as pl
from deltalake.exceptions import CommitFailedError, DeltaError
from pyarrow import ArrowException

from stemma.core.layout import RootLayout
from stemma.storage.errors import DamagedTableError
from stemma.storage.schemas import TableSpec
from stemma.storage.tables import read_table

GAP = re.compile(
    r'found gap: .*?path: "(?P<table>[^"]+)/_delta_log/(?P<before>\d+)\.json".*?'
    r'-> ParsedLogPath.*?filename: "(?P<after>\d+)\.json"',
    re.DOTALL,
)
"""delta-rs's words for a log with a commit missing: the table, and the commits either side."""
_CAUSE_LENGTH = 160


def is_damage(error: BaseException) -> bool:
    """Whether ``error`` is what reading a damaged table raises (not a bug, not an interrupt)."""
    if isinstance(error, CommitFailedError):
        return False  # a concurrent writer won: retried where it is raised
    if type(error).__name__ == "PanicException":  # pyo3's, not importable by name
        return True
    return isinstance(error, DeltaError | pl.exceptions.ComputeError | ArrowException | OSError)


def cause(error: BaseException) -> str:
    """What went wrong, in a few words (the file itself is for ``stemma check`` to find)."""
    gap = GAP.search(str(error))
    if gap is not None:
        missing = int(gap["before"]) + 1
        return f"commit {missing:020d}.json of its log is missing"
    if isinstance(error, FileNotFoundError):
        return "a data file its log lists is missing"
    text = str(error)
    if type(error).__name__ == "PanicException" or "parquet" in text.lower():
        return "one of its data files is not readable Parquet"
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return first[:_CAUSE_LENGTH]


def damaged_table_named(layout: RootLayout, error: BaseException) -> str | None:
    """The table ``error`` names (a gap in its log), as a name under ``delta/``; else None."""
    gap = GAP.search(str(error))
    if gap is None:
        return None
    try:
        # delta-rs escapes the path as a URL's (a root with a space: ``%20``)
        return Path(unquote(gap["table"])).relative_to(layout.delta).as_posix()
    except ValueError:
        return None


@contextmanager
def reading(layout: RootLayout, spec: TableSpec) -> Generator[None, None, None]:
    """Read table ``spec`` in the body; a failure a damaged file causes names the table.

    Raises:
        DamagedTableError: the table (or, for a gap, the one the error names) is damaged.
    """
    try:
        yield
    except DamagedTableError:
        raise
    except BaseException as err:
        if not is_damage(err):
            raise
        table = damaged_table_named(layout, err) or _if_damaged(layout, spec.name)
        if table is None:
            raise
        raise DamagedTableError(table, layout.root, cause(err)) from err


def read_table_checked(
    layout: RootLayout,
    spec: TableSpec,
    predicate: pl.Expr | None = None,
    columns: Sequence[str] | None = None,
) -> pl.DataFrame:
    """:func:`~stemma.storage.tables.read_table`, a damaged table raised as one clear error.

    Raises:
        DamagedTableError: the table cannot be read; the message names it and ``stemma check``.
    """
    with reading(layout, spec):
        return read_table(layout, spec, predicate, columns)


@contextmanager
def committing(layout: RootLayout) -> Generator[None, None, None]:
    """Commit staged work in the body; a damaged table it meets is named, the work kept staged.

    Raises:
        DamagedTableError: with ``staged=True``: the message says nothing was lost.
    """
    with touching_tables(layout, staged=True):
        yield


@contextmanager
def touching_tables(layout: RootLayout, *, staged: bool = False) -> Generator[None, None, None]:
    """Read or write any of the root's tables in the body; a damaged one it meets is named.

    The body may touch several tables: the one that failed is the one the error names (a gap),
    else the first :func:`~stemma.storage.table_check.damaged_tables` finds. A failure no
    damaged table explains goes through as it was.

    Args:
        layout: the store root.
        staged: the body commits staged work, which stays staged: the message says so.

    Raises:
        DamagedTableError: a table of the root is damaged.
    """
    try:
        yield
    except DamagedTableError as err:
        if err.staged or not staged:
            raise
        raise DamagedTableError(err.table, layout.root, _cause_of(err), staged=True) from err
    except BaseException as err:
        if not is_damage(err):
            raise
        table = damaged_table_named(layout, err) or _first_damaged(layout)
        if table is None:
            raise
        raise DamagedTableError(table, layout.root, cause(err), staged=staged) from err


def _cause_of(error: DamagedTableError) -> str:
    inner = error.__cause__
    return cause(inner) if inner is not None else "it is damaged"


def _if_damaged(layout: RootLayout, name: str) -> str | None:
    """``name`` if a check of that table finds a damaged file, else None."""
    from stemma.storage.check_findings import Severity  # only once a read failed
    from stemma.storage.table_check import check_table

    path = layout.delta / name
    if not (path / "_delta_log").is_dir():
        return None
    problems = check_table(layout, name, path)
    return name if any(p.severity is Severity.DAMAGED for p in problems) else None


def _first_damaged(layout: RootLayout) -> str | None:
    from stemma.storage.table_check import damaged_tables  # only once a commit failed

    found = damaged_tables(layout)
    return found[0] if found else None
