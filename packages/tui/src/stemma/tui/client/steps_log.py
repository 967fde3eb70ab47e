"""The steps table, read incrementally: a refresh reads only the data files added since the last.

The orchestrator appends one small file per commit, so a busy root's steps table is thousands
of files: scanning them all costs about a second, where reading the one a commit added costs
milliseconds. Stemma only appends to this table; if a file seen before is gone (the table was
compacted or vacuumed), everything is read again.

Imports polars and delta-rs: load this module only from a thread worker, off the paint path.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import polars as pl
from deltalake import DeltaTable

from stemma.storage.schemas import STEPS


class StepsLog:
    """One root's ``orchestration/steps`` table, kept in memory and caught up on demand.

    Not thread-safe: the caller holds a lock (the :class:`HistoryCache` does).
    """

    def __init__(self, root: Path) -> None:
        self._path = STEPS.path(root / "delta")
        self._table: DeltaTable | None = None
        self._seen: set[str] = set()
        self._frame = STEPS.empty()
        self.files_read = 0
        """Data files read so far (how a test tells an incremental read from a full one)."""
        self.added: pl.DataFrame | None = None
        """The rows the last :meth:`frame` call added; None when it read everything afresh."""

    def frame(self) -> pl.DataFrame:
        """Every row of the table as of now, oldest first (empty before the table exists)."""
        if not (self._path / "_delta_log").is_dir():
            return self._frame
        if self._table is None:
            self._table = DeltaTable(str(self._path))
        else:
            self._table.update_incremental()
        files = self._table.file_uris()
        afresh = not self._seen or not self._seen.issubset(files)
        if afresh:
            self._seen, self._frame = set(), STEPS.empty()
        new = [uri for uri in files if uri not in self._seen]
        added = STEPS.empty()
        if new:
            # (delta-rs escapes its URIs, a space as %20; polars wants the file's own path)
            paths = [unquote(uri) for uri in new]
            added = pl.read_parquet(paths).select(STEPS.columns).cast(STEPS.polars_schema)
            self._frame = pl.concat([self._frame, added]).sort("timestamp")
            self._seen.update(new)
            self.files_read += len(new)
        self.added = None if afresh else added
        return self._frame
