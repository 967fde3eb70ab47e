"""The steps table, read incrementally: a refresh reads only the data files added since the last.

The orchestrator appends one small file per commit, so a busy root's steps table is thousands
of files: scanning them all costs about a second, where reading the one a commit added costs
milliseconds. Stemma only appends to this table; if a file seen before is gone (the table was
compacted or vacuumed), everything is read again. On a root in an object store the table is
read from the bucket (its log caught up with a listing, its new files with a get each).

Imports polars and delta-rs: load this module only from a thread worker, off the paint path.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import polars as pl
from deltalake import DeltaTable

from stemma.core.store.locations import RootLayout
from stemma.core.store.parquet_marks import first_unsound
from stemma.storage.data_files import logged_files
from stemma.storage.errors import DamagedTableError
from stemma.storage.schemas import STEPS
from stemma.storage.table_places import table_place


class StepsLog:
    """One root's ``orchestration/steps`` table, kept in memory and caught up on demand.

    Not thread-safe: the caller holds a lock (the :class:`HistoryCache` does).
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._place = table_place(RootLayout(root), STEPS.name)
        self._table: DeltaTable | None = None
        self._seen: set[str] = set()
        self._frame = STEPS.empty()
        self.files_read = 0
        """Data files read so far (how a test tells an incremental read from a full one)."""
        self.added: pl.DataFrame | None = None
        """The rows the last :meth:`frame` call added; None when it read everything afresh."""

    def frame(self) -> pl.DataFrame:
        """Every row of the table as of now, oldest first (empty before the table exists)."""
        place = self._place
        if not place.exists():
            return self._frame
        if self._table is None:
            self._table = DeltaTable(place.uri, storage_options=place.options)
        else:
            self._table.update_incremental()
        if place.local is not None:
            files = dict(logged_files(self._table, place.local))  # each file: its logged size
        else:  # in a bucket: each file's URL (a file there is written whole: nothing to look at)
            actions = self._table.get_add_actions(flatten=False)
            logged = cast("list[str]", actions.column("path").to_pylist())  # pyright: ignore[reportUnknownMemberType]
            files: dict[str, int | None] = {f"{place.uri}/{path}": None for path in logged}
        afresh = not self._seen or not self._seen.issubset(files)
        if afresh:
            self._seen, self._frame = set(), STEPS.empty()
        new = [path for path in files if path not in self._seen]
        added = STEPS.empty()
        if new:
            if place.local is not None:
                self._check([(path, files[path]) for path in new])
            read = pl.read_parquet(new, storage_options=place.options)
            added = read.select(STEPS.columns).cast(STEPS.polars_schema)
            self._frame = pl.concat([self._frame, added]).sort("timestamp")
            self._seen.update(new)
            self.files_read += len(new)
        self.added = None if afresh else added
        return self._frame

    def _check(self, files: list[tuple[str, int | None]]) -> None:
        """Look at the files about to be read: polars must never meet a damaged one.

        Raises:
            DamagedTableError: one is missing or damaged (named, for the damage watch to say).
        """
        found = first_unsound(files)
        if found is not None:
            path, problem = found
            cause = f"its data file {Path(path).name} {problem}"
            raise DamagedTableError(STEPS.name, self._root, cause)
