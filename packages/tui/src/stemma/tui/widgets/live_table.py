"""A data table whose rows change one at a time, and which shows another set of rows fast.

Textual's ``DataTable.update_cell`` bumps one table-wide counter that is part of every cache
key (the row renderables, each cell's and row's lines, each screen line), then refreshes the
whole widget: one changed cell renders every visible cell again. On the runs list, a running
run's duration changes each second, and that re-render of 44 rows of 6 cells was 12-14% of a
core with nothing else happening (issue 6's idle budget is 2%). :meth:`LiveTable.update_row_at`
writes the row's cells, drops only the cache entries of that row, and repaints only its lines.
The cache layout is Textual's private business (8.x); ``tests/tui/test_live_table.py`` fails if
an upgrade leaves a stale row or repaints the others, rather than the dashboard showing old text.

Filling a table is the other cost: a filter keystroke on the runs list of 10,000 runs showed
another set of rows. ``DataTable.add_row`` sets the cursor reactive and lists the columns for
each row, and its idle pass then measures every new cell with rich to widen auto-width columns
(~2 s at load 3); :meth:`LiveTable.add_rows` adds rows in one pass and measures nothing when no
column is auto-width. Then even one pass over 10,000 rows (a row object, the cells by column,
three dicts keyed by ``RowKey`` hashed in Python) was most of a keystroke, though only the ~45
rows on screen are drawn: :meth:`LiveTable.show_rows` takes the keys in order and a function
that makes a row's cells, and makes a row only when something reads it (``shown_table.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import zip_longest
from typing import Any

from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.widgets.data_table import ColumnKey, DuplicateKey, Row, RowKey

from stemma.tui.widgets.shown_table import ShownRowsTable


class LiveTable(ShownRowsTable):
    """A ``DataTable`` for rows that change while others do not, and tables filtered often.

    :meth:`update_row_at` repaints one row; :meth:`show_rows` and :meth:`replace_rows` show
    another set of rows, making only those read.
    """

    def update_row_at(self, row_index: int, cells: Sequence[object]) -> None:
        """Replace the cells of the row at ``row_index`` and repaint that row alone.

        Column widths stay as they are (as ``update_cell(..., update_width=False)``).

        Args:
            row_index: The row's position in the table as shown.
            cells: One value per column, in column order.

        Raises:
            ValueError: When ``cells`` does not have one value per column.
        """
        columns = self.ordered_columns
        if len(cells) != len(columns):
            raise ValueError(f"update_row_at: {len(cells)} cells for {len(columns)} columns")
        row_key, _ = self.coordinate_to_cell_key(Coordinate(row_index, 0))
        data: dict[Any, Any] = self._data[row_key]  # pyright: ignore[reportPrivateUsage]
        for column, value in zip(columns, cells, strict=True):
            data[column.key] = value
        self._made.pop(row_key.value or "", None)  # its cells are not the ones it was made with
        if self._shown is not None and row_key.value in self._shown.read:
            made = self._shown.read[row_key.value]
            self._shown.read[row_key.value] = (cells, made[1], made[2])
        self._forget_row(row_index, row_key)
        self.forget_lines_of(row_key)
        self.refresh_row(row_index)

    def add_rows(self, rows: Iterable[Iterable[object]]) -> list[RowKey]:
        """Add rows at the bottom, as ``DataTable.add_rows`` does, in one pass.

        Each row gets a new key, a height of one line and no label, as ``add_row`` with its
        defaults; the cursor is checked and a first row highlighted once for the whole batch.

        Args:
            rows: one iterable of cells per row, in column order (missing cells are None).

        Raises:
            ValueError: When a row has more cells than the table has columns.
        """
        self._materialize()
        columns = self.ordered_columns
        keys = [column.key for column in columns]
        # Textual's own bookkeeping of rows (8.x): what add_row writes, row by row.
        data: dict[RowKey, dict[Any, Any]] = self._data  # pyright: ignore[reportPrivateUsage]
        locations = self._row_locations  # pyright: ignore[reportPrivateUsage]
        new_rows: set[RowKey] = self._new_rows  # pyright: ignore[reportPrivateUsage]
        was_empty = self.row_count == 0
        added: list[RowKey] = []
        for row_index, cells in enumerate(rows, start=self.row_count):
            values = tuple(cells)
            if len(values) > len(keys):
                raise ValueError(f"add_rows: {len(values)} cells for {len(keys)} columns")
            row_key = RowKey()
            locations[row_key] = row_index
            data[row_key] = dict(zip_longest(keys, values))
            self.rows[row_key] = Row(row_key, 1)
            new_rows.add(row_key)
            added.append(row_key)
        if added:
            self._rows_added(was_empty=was_empty)
        return added

    def replace_rows(self, rows: Sequence[tuple[str, Sequence[object]]]) -> None:
        """Show ``rows`` instead of the table's rows: :meth:`show_rows` with the cells given.

        Raises:
            ValueError: When a row has more cells than the table has columns.
            DuplicateKey: When two rows have the same key.
        """
        columns = len(self.columns)
        if any(len(cells) > columns for _, cells in rows):
            wide = max(len(cells) for _, cells in rows)
            raise ValueError(f"replace_rows: {wide} cells for {columns} columns")
        given = dict(rows)
        if len(given) != len(rows):
            raise DuplicateKey(f"replace_rows: {len(rows) - len(given)} keys given twice")
        self.show_rows(list(given), given.__getitem__)

    def update_cell(
        self,
        row_key: RowKey | str,
        column_key: ColumnKey | str,
        value: object,
        *,
        update_width: bool = False,
    ) -> None:
        """``DataTable.update_cell``; the row is no longer the one made from its cells."""
        self._made.pop(row_key.value or "" if isinstance(row_key, RowKey) else row_key, None)
        super().update_cell(row_key, column_key, value, update_width=update_width)

    def _forget_row(self, row_index: int, row_key: object) -> None:
        """Drop the cached renders of one row: its renderables, cells, row lines and screen lines.

        The screen-line cache is keyed by the line's y in the table (header included), which is
        where ``_get_row_region`` puts the row.
        """
        count: int = self._update_count  # pyright: ignore[reportPrivateUsage]
        self._row_renderable_cache.discard((count, row_index))  # pyright: ignore[reportPrivateUsage]
        region = self._get_row_region(row_index)
        lines = range(region.y, region.bottom)
        _discard(self._cell_render_cache, lambda key: key[0] == row_key)  # pyright: ignore[reportPrivateUsage]
        _discard(self._row_render_cache, lambda key: key[0] == row_key)  # pyright: ignore[reportPrivateUsage]
        _discard(self._line_cache, lambda key: key[0] in lines)  # pyright: ignore[reportPrivateUsage]


def _discard(cache: LRUCache[Any, Any], dropped: Callable[[tuple[Any, ...]], bool]) -> None:
    """Drop the entries of ``cache`` whose key (a tuple) is ``dropped``."""
    for key in list(cache.keys()):
        if dropped(key):
            cache.discard(key)
