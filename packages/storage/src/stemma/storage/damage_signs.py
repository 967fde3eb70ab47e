"""How a failed read of a Delta table says the table is damaged: the signs, and the cause in words.

delta-rs and polars say "damaged" each their own way: a gap in the log is a ``DeltaError`` with
a long debug dump, a data file that is not Parquet a Rust panic (pyo3's ``PanicException``, a
``BaseException``) or a polars ``ComputeError``, a data file gone an ``OSError``. Both the
translation of a failed read (:mod:`stemma.storage.table_damage`) and the table check
(:mod:`stemma.storage.table_check`) read the signs here.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import polars as pl
from deltalake.exceptions import CommitFailedError, DeltaError
from pyarrow import ArrowException

from stemma.core.store.locations import RootLayout

GAP = re.compile(
    r'found gap: .*?path: "(?P<table>[^"]+)/_delta_log/(?P<before>\d+)\.json".*?'
    r'-> ParsedLogPath.*?filename: "(?P<after>\d+)\.json"',
    re.DOTALL,
)
"""delta-rs's words for a log with a commit missing: the table, and the commits either side."""
NO_METADATA = "No table metadata or protocol found in delta log"
"""delta-rs's words for a log with neither a checkpoint nor its first commit, which holds the
table's metadata (the table was made by that commit)."""
LOG_FILE_GONE = re.compile(r"File not found: .*?_delta_log/(?P<version>\d+)\.json")
"""delta-rs's words for a commit it listed (or an open handle knew) gone when it came to read it."""
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
    text = str(error)
    gap = GAP.search(text)
    if gap is not None:
        return _commit_missing(int(gap["before"]) + 1)
    gone = LOG_FILE_GONE.search(text)
    if gone is not None:
        return _commit_missing(int(gone["version"]))
    if NO_METADATA in text:
        return _commit_missing(0)
    if isinstance(error, FileNotFoundError):
        return "a data file its log lists is missing"
    if type(error).__name__ == "PanicException" or "parquet" in text.lower():
        return "one of its data files is not readable Parquet"
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return first[:_CAUSE_LENGTH]


def _commit_missing(version: int) -> str:
    first = ", the first," if version == 0 else ""
    return f"commit {version:020d}.json of its log{first} is missing"


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
