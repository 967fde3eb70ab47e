"""Turning a failed read of a damaged Delta table into one error that names it and the way out.

delta-rs and polars say "damaged" each their own way: a gap in the log is a ``DeltaError`` with
a long debug dump, a data file that is not Parquet a Rust panic (pyo3's ``PanicException``, a
``BaseException``) or a polars ``ComputeError``, a data file gone an ``OSError``. Each becomes a
:class:`~stemma.storage.errors.DamagedTableError` naming the table and ``stemma check``, which
finds the file and says the fix (:mod:`stemma.storage.root_check`).

On a root in an object store the table is checked in the bucket
(:mod:`stemma.storage.bucket_check`), on the error path only, as on a filesystem.

Anything else goes through untouched: an interrupt, a bug, a full disk. Only a failure that a
damaged file explains is translated: delta-rs named the gap, or a check of the table
(:func:`~stemma.storage.table_check.check_table`, on the error path only) finds the file.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from contextlib import contextmanager

import polars as pl

from stemma.core.store.locations import RootLayout
from stemma.storage.damage_signs import cause, damaged_table_named, is_damage
from stemma.storage.errors import DamagedTableError
from stemma.storage.schemas import TableSpec
from stemma.storage.tables import read_table


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

    if layout.store is not None:  # a root in an object store: the table is in the bucket
        from stemma.storage.bucket_check import check_bucket_table
        from stemma.storage.table_places import table_place

        problems = check_bucket_table(layout, table_place(layout, name)) or []
    else:
        path = layout.delta / name
        if not (path / "_delta_log").is_dir():
            return None
        problems = check_table(layout, name, path)
    return name if any(p.severity is Severity.DAMAGED for p in problems) else None


def _first_damaged(layout: RootLayout) -> str | None:
    # only once a commit failed
    if layout.store is not None:
        from stemma.storage.bucket_check import damaged_bucket_tables

        found = damaged_bucket_tables(layout)
    else:
        from stemma.storage.table_check import damaged_tables

        found = damaged_tables(layout)
    return found[0] if found else None
