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
that makes a row's cells, and makes a row only when something reads it (``shown_rows.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import zip_longest
from typing import Any, Self, cast

from textual._two_way_dict import TwoWayDict
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.geometry import Region, Size
from textual.widgets.data_table import ColumnKey, DuplicateKey, Row, RowKey

from stemma.tui.widgets.kept_cells import KeptCellsTable
from stemma.tui.widgets.shown_rows import (
    CellsOf,
    LocationsView,
    Made,
    OrderedView,
    RowsView,
    ShownRows,
)

MADE_KEPT = 10_000
"""Rows kept made for when their cells come back (a filter deleted), beyond those shown."""


class LiveTable(KeptCellsTable):
    """A ``DataTable`` for rows that change while others do not, and tables filtered often.

    :meth:`update_row_at` repaints one row; :meth:`show_rows` and :meth:`replace_rows` show
    another set of rows, making only those read.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._made: dict[str, Made] = {}
        """Rows made from their cells, by key (see ``shown_rows.Made``)."""
        self._shown: ShownRows | None = None
        """The rows of :meth:`show_rows`, while Textual's dicts are views of them. Both made
        first: Textual's ``__init__`` already reads the rows."""
        super().__init__(**kwargs)

    @property
    def rows_read(self) -> dict[str, Sequence[object]]:
        """The cells of each row made since :meth:`show_rows`, by key (drawn, or read).

        Rows not in it are made from the caller's cells when read; to change a row in it, use
        :meth:`update_row_at`. Every row, when the rows were added another way.
        """
        if self._shown is None:
            data = self._data  # pyright: ignore[reportPrivateUsage]
            columns = [column.key for column in self.ordered_columns]
            return {
                str(key.value): tuple(cells.get(c) for c in columns) for key, cells in data.items()
            }
        return {key: made[0] for key, made in self._shown.read.items()}

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

    def show_rows(self, keys: Sequence[str], cells_of: CellsOf) -> None:
        """Show the rows ``keys``, in order, instead of the table's rows.

        As ``clear()`` then ``add_row(*cells_of(key), key=key)`` for each key (one line, no
        label; the cursor back at the top), but a row is made only when read (drawn, under the
        cursor, ``get_row_at``...), from ``cells_of(key)`` then. A row made before for the same
        key and the same cells object (``is``, not ``==``: a caller that keeps a finished row's
        cells hands the same tuple) is put back, not made again.

        Args:
            keys: The rows' keys, in the order shown; unique.
            cells_of: The cells of the row with a key, in column order (missing cells are
                None); asked once per row read until the next call.

        Raises:
            DuplicateKey: When a key is given twice.
        """
        self.clear()
        columns = [column.key for column in self.ordered_columns]
        shown = ShownRows(keys, cells_of, columns, self._made)
        if len(shown.index) != len(keys):
            raise DuplicateKey(f"show_rows: {len(keys) - len(shown.index)} keys given twice")
        if len(self._made) > MADE_KEPT:  # keys gone for good, most likely
            self._made.clear()
        self._shown = shown
        self.rows = cast("dict[RowKey, Row]", RowsView(shown, 1))
        self._data = cast("Any", RowsView(shown, 2))
        self._row_locations = cast("Any", LocationsView(shown))
        if any(column.auto_width for column in self.columns.values()):
            self._materialize()  # each cell measured to widen its column: every row made
            self._new_rows.update(self.rows)  # pyright: ignore[reportPrivateUsage]
        self._rows_added(was_empty=True)

    def _materialize(self) -> None:
        """Make every row shown and fill Textual's own dicts: before anything else changes rows."""
        shown, self._shown = self._shown, None
        if shown is None:
            return
        made = [shown.row(key) for key in shown.keys]
        self.rows = {entry[1].key: entry[1] for entry in made}
        self._data = {entry[1].key: entry[2] for entry in made}
        self._row_locations = TwoWayDict({entry[1].key: i for i, entry in enumerate(made)})

    def clear(self, columns: bool = False) -> Self:
        """``DataTable.clear``; rows made are kept for when the same cells come back."""
        self._shown = None
        self.rows = {}
        self._data = {}
        return super().clear(columns)

    def add_row(self, *cells: object, **kwargs: Any) -> RowKey:
        """``DataTable.add_row``, after the rows shown are made."""
        self._materialize()
        return super().add_row(*cells, **kwargs)

    def add_column(self, *args: Any, **kwargs: Any) -> ColumnKey:
        """``DataTable.add_column``, after the rows shown are made (each gets its cell)."""
        self._materialize()
        return super().add_column(*args, **kwargs)

    def remove_row(self, row_key: RowKey | str) -> None:
        """``DataTable.remove_row``, after the rows shown are made."""
        self._materialize()
        super().remove_row(row_key)

    def remove_column(self, column_key: ColumnKey | str) -> None:
        """``DataTable.remove_column``, after the rows shown are made."""
        self._materialize()
        super().remove_column(column_key)

    def sort(self, *columns: ColumnKey | str, **kwargs: Any) -> Self:
        """``DataTable.sort``, after the rows shown are made."""
        self._materialize()
        return super().sort(*columns, **kwargs)

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

    @property
    def ordered_rows(self) -> list[Row]:
        """``DataTable.ordered_rows``: a view while :meth:`show_rows`'s rows are shown."""
        if self._shown is None:
            return super().ordered_rows
        return cast("list[Row]", OrderedView(self._shown, range(len(self._shown.keys))))

    @property
    def _y_offsets(self) -> list[tuple[RowKey, int]]:
        """``DataTable._y_offsets`` (each line's row and line in it): a view likewise."""
        if self._shown is None:
            return super()._y_offsets  # pyright: ignore[reportPrivateUsage]
        positions = range(len(self._shown.keys))
        return cast("list[tuple[RowKey, int]]", OrderedView(self._shown, positions, offsets=True))

    def _get_row_region(self, row_index: int) -> Region:
        """``DataTable._get_row_region``; shown rows are one line each: no sum over those above."""
        if self._shown is None or not self.is_valid_row_index(row_index):
            return super()._get_row_region(row_index)  # pyright: ignore[reportPrivateUsage]
        columns = sum(column.get_render_width(self) for column in self.columns.values())
        width = columns + self._row_label_column_width  # pyright: ignore[reportPrivateUsage]
        return Region(0, self._row_y(row_index), max(self.size.width, width), 1)

    def _get_cell_region(self, coordinate: Coordinate) -> Region:
        """``DataTable._get_cell_region``; likewise."""
        if self._shown is None or not self.is_valid_coordinate(coordinate):
            return super()._get_cell_region(coordinate)  # pyright: ignore[reportPrivateUsage]
        row_index, column_index = coordinate
        columns = self.ordered_columns
        x = sum(column.get_render_width(self) for column in columns[:column_index])
        x += self._row_label_column_width  # pyright: ignore[reportPrivateUsage]
        return Region(x, self._row_y(row_index), columns[column_index].get_render_width(self), 1)

    def _row_y(self, row_index: int) -> int:
        return row_index + (self.header_height if self.show_header else 0)

    def _rows_added(self, *, was_empty: bool) -> None:
        """What ``add_row`` does after adding a row, once for all the rows just added."""
        self._require_update_dimensions = True  # pyright: ignore[reportPrivateUsage]
        self.cursor_coordinate = self.cursor_coordinate  # clamped to the rows there are now
        visible_cursor = self.show_cursor and self.cursor_type != "none"
        if was_empty and self.row_count and self.columns and visible_cursor:
            self._highlight_cursor()  # pyright: ignore[reportPrivateUsage]
        count: int = self._update_count  # pyright: ignore[reportPrivateUsage]
        self._update_count = count + 1  # every cache key holds it: what was drawn is stale
        self.check_idle()

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        """The table's virtual size; new cells measured only when a column's width needs them.

        ``DataTable`` measures every new cell to widen auto-width columns and lays out rows of
        automatic height or with a label. With fixed widths, one-line rows and no labels there
        is nothing to measure: only the size is set, as ``DataTable`` sets it.
        """
        rows = [self.rows[key] for key in new_rows if key in self.rows]
        auto = any(column.auto_width for column in self.columns.values())
        if auto or any(row.label is not None or row.auto_height for row in rows):
            super()._update_dimensions(row.key for row in rows)  # pyright: ignore[reportPrivateUsage]
            return
        width = sum(column.get_render_width(self) for column in self.columns.values())
        header = self.header_height if self.show_header else 0
        self.virtual_size = Size(
            width + self._row_label_column_width,  # pyright: ignore[reportPrivateUsage]
            self._total_row_height + header,  # pyright: ignore[reportPrivateUsage]
        )

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
