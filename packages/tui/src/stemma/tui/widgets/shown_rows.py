"""The rows a :class:`~.live_table.LiveTable` shows, as views Textual's ``DataTable`` reads.

A ``DataTable`` keeps its rows in three dicts keyed by ``RowKey`` (the rows, their cells by
column, their positions both ways) and lists them again in order (``ordered_rows``, one
offset per line). Filling them for 10,000 rows costs ~40,000 dict operations, each hashing a
``RowKey`` in Python, on every filter keystroke; and each row's cells must be made first,
though only the ~45 rows on screen are ever drawn.

:class:`ShownRows` holds the keys in order and a function that makes one row's cells; the
views below answer what ``DataTable`` asks of its dicts (8.x: ``get``, ``get_key``, ``[]``,
``in``, ``len``, iteration) from them, making a row (its cells, Textual's ``Row`` and the
cells by column) only when something reads it: drawing, the cursor, ``get_row_at``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import zip_longest
from typing import Any, overload

from textual.widgets.data_table import ColumnKey, Row, RowKey, StringKey

Made = tuple[Sequence[object], Row, dict[ColumnKey, object]]
"""A row as made for its cells: the cells, Textual's row and the cells by column. Kept while
the caller hands the same cells object (``is``), so a row shown again is put back as it was."""

CellsOf = Callable[[str], Sequence[object]]
"""The cells of the row with a key, in column order."""


def _name(key: object) -> object:
    """A row key's string: Textual looks rows up by ``RowKey`` or by the string itself."""
    return key.value if isinstance(key, StringKey) else key


class ShownRows:
    """Rows in order, each made on first read from its cells (see the module's docstring)."""

    def __init__(
        self,
        keys: Sequence[str],
        cells_of: CellsOf,
        columns: Sequence[ColumnKey],
        made: dict[str, Made],
        index: dict[object, int] | None = None,
    ) -> None:
        self.keys = keys
        """The rows' keys, in the order shown."""
        self._cells_of = cells_of
        self._columns = columns
        self._made = made
        """Rows made before, by key (shared across shows: see :data:`Made`)."""
        self.read: dict[str, Made] = {}
        """The rows read since these rows were shown: drawn, under the cursor or asked for."""
        self._index = index

    @property
    def index(self) -> dict[object, int]:
        """Each key's position (made on first use: a dict of 10,000 strings is ~0.5 ms)."""
        if self._index is None:
            index: dict[object, int] = dict(zip(self.keys, range(len(self.keys)), strict=True))
            self._index = index
        return self._index

    def row(self, key: str) -> Made:
        """The row with ``key``, made from its cells on first read.

        Raises:
            ValueError: When the row has more cells than the table has columns.
        """
        made = self.read.get(key)
        if made is None:
            cells = self._cells_of(key)
            made = self._made.get(key)
            if made is None or made[0] is not cells:
                if len(cells) > len(self._columns):
                    wide = f"{len(cells)} cells for {len(self._columns)} columns"
                    raise ValueError(f"row {key}: {wide}")
                made = (cells, Row(RowKey(key), 1), dict(zip_longest(self._columns, cells)))
                self._made[key] = made
            self.read[key] = made
        return made

    def at(self, position: int) -> Made:
        """The row at ``position``."""
        return self.row(self.keys[position])


class RowsView(Mapping[Any, Any]):
    """``DataTable.rows`` (row key → ``Row``) or ``DataTable._data`` (→ cells by column)."""

    def __init__(self, shown: ShownRows, part: int) -> None:
        self._shown = shown
        self._part = part  # 1: Textual's Row, 2: the cells by column (see Made)

    def __getitem__(self, key: object) -> Any:
        name = _name(key)
        if name not in self._shown.index:
            raise KeyError(key)
        return self._shown.row(str(name))[self._part]

    def __contains__(self, key: object) -> bool:
        return _name(key) in self._shown.index

    def __iter__(self) -> Iterator[RowKey]:
        return (self._shown.row(key)[1].key for key in self._shown.keys)

    def __len__(self) -> int:
        return len(self._shown.keys)


class LocationsView:
    """``DataTable._row_locations``: a row key's position and back (Textual's ``TwoWayDict``)."""

    def __init__(self, shown: ShownRows) -> None:
        self._shown = shown

    def get(self, key: object) -> int | None:
        """The position of the row with ``key``."""
        return self._shown.index.get(_name(key))

    def get_key(self, position: int) -> RowKey | None:
        """The key of the row at ``position``."""
        if not 0 <= position < len(self._shown.keys):
            return None
        return self._shown.at(position)[1].key

    def contains_value(self, position: int) -> bool:
        """Whether a row is at ``position``."""
        return 0 <= position < len(self._shown.keys)

    def __contains__(self, key: object) -> bool:
        return _name(key) in self._shown.index

    def __iter__(self) -> Iterator[RowKey]:
        return iter(RowsView(self._shown, 1))

    def __len__(self) -> int:
        return len(self._shown.keys)


class OrderedView(Sequence[Any]):
    """``DataTable.ordered_rows`` (``Row`` per position) or ``_y_offsets`` (``(key, 0)`` per line).

    A slice is a view too: Textual's page-down walks ``ordered_rows[row:]`` until a page is
    full, which must not make every row below.
    """

    def __init__(self, shown: ShownRows, positions: range, *, offsets: bool = False) -> None:
        self._shown = shown
        self._positions = positions
        self._offsets = offsets

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> OrderedView: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return OrderedView(self._shown, self._positions[index], offsets=self._offsets)
        row = self._shown.at(self._positions[index])[1]  # IndexError past the end, as a list
        return (row.key, 0) if self._offsets else row

    def __len__(self) -> int:
        return len(self._positions)

    def clear(self) -> None:
        """``DataTable.clear`` empties its offsets list; these rows are dropped whole instead."""
