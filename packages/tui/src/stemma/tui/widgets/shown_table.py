"""A ``DataTable`` that shows rows given as keys in order, making a row only when it is read.

Showing another set of rows (a filter keystroke on the runs list of 10,000 runs) was one pass
over every row: a row object, the cells by column and three dicts keyed by ``RowKey`` hashed in
Python, though only the ~45 rows on screen are drawn. :meth:`ShownRowsTable.show_rows` takes
the keys in order and a function that makes a row's cells; Textual's dicts become views of
them (``shown_rows.py``), and what Textual would work out over every row (the offsets of lines,
the region of a row, the table's size) is worked out from the position, every row being one
line. Anything else that changes rows (``add_row``, ``sort``, a column added) first makes every
row and fills Textual's own dicts again (:meth:`ShownRowsTable._materialize`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Self, cast

from textual._two_way_dict import TwoWayDict
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


class ShownRowsTable(KeptCellsTable):
    """A ``DataTable`` whose rows can be shown as keys and a function making their cells."""

    def __init__(self, **kwargs: Any) -> None:
        self._made: dict[str, Made] = {}
        """Rows made from their cells, by key (see ``shown_rows.Made``)."""
        self._indexes: list[tuple[Sequence[str], dict[object, int]]] = []
        """The last key lists shown and each key's position in them (``keys`` is ``keys``)."""
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

    def show_rows(self, keys: Sequence[str], cells_of: CellsOf) -> None:
        """Show the rows ``keys``, in order, instead of the table's rows.

        As ``clear()`` then ``add_row(*cells_of(key), key=key)`` for each key (one line, no
        label; the cursor back at the top), but a row is made only when read (drawn, under the
        cursor, ``get_row_at``...), from ``cells_of(key)`` then. A row made before for the same
        key and the same cells object (``is``, not ``==``: a caller that keeps a finished row's
        cells hands the same tuple) is put back, not made again.

        Args:
            keys: The rows' keys, in the order shown; unique. Kept, not copied: the same
                list object shown again reuses what was worked out from it, so it must not
                change after.
            cells_of: The cells of the row with a key, in column order (missing cells are
                None); asked once per row read until the next call.

        Raises:
            DuplicateKey: When a key is given twice.
        """
        self.clear()
        columns = [column.key for column in self.ordered_columns]
        index = next((index for shown, index in self._indexes if shown is keys), None)
        shown = ShownRows(keys, cells_of, columns, self._made, index)
        if len(shown.index) != len(keys):
            raise DuplicateKey(f"show_rows: {len(keys) - len(shown.index)} keys given twice")
        if index is None:  # a filter typed then deleted shows the same list again
            self._indexes = [(keys, shown.index), *self._indexes[:3]]
        if len(self._made) > MADE_KEPT:  # keys gone for good, most likely
            self._made.clear()
        self._shown = shown
        self.rows = cast("dict[RowKey, Row]", RowsView(shown, 1))
        self._data = cast("Any", RowsView(shown, 2))
        self._row_locations = cast("Any", LocationsView(shown))
        measure = any(column.auto_width for column in self.columns.values())
        if measure:
            self._materialize()  # each cell measured to widen its column: every row made
            self._new_rows.update(self.rows)  # pyright: ignore[reportPrivateUsage]
        self._rows_added(was_empty=True, sized=not measure)

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

    def _scroll_cursor_into_view(self, animate: bool = False) -> None:
        """``DataTable._scroll_cursor_into_view``, scrolling now rather than after a frame.

        Textual scrolls after the next frame, which first drew the rows at the old offset: a
        filter deleted with the cursor kept on a run far down drew the top rows for nothing.
        Only for :meth:`show_rows`'s rows once the table is laid out (its size known).
        """
        if self._shown is None or animate or self.cursor_type != "row" or not self.size.height:
            super()._scroll_cursor_into_view(animate)  # pyright: ignore[reportPrivateUsage]
            return
        spacing = self._get_fixed_offset()  # pyright: ignore[reportPrivateUsage]
        _, y, width, height = self._get_row_region(self.cursor_row)
        left = spacing.left
        region = Region(int(self.scroll_x) + left, y, width - left, height)
        self.scroll_to_region(region, animate=False, spacing=spacing, force=True, immediate=True)

    def _row_y(self, row_index: int) -> int:
        return row_index + (self.header_height if self.show_header else 0)

    def _rows_added(self, *, was_empty: bool, sized: bool = False) -> None:
        """What ``add_row`` does after adding a row, once for all the rows just added.

        ``sized``: nothing to measure, so the table's size is set now rather than when the app
        is next idle. Textual scrolls to a cursor moved before then only after the next frame,
        which drew the rows at the top first (a filter deleted: 44 rows drawn for nothing).
        """
        self._require_update_dimensions = not sized  # pyright: ignore[reportPrivateUsage]
        if sized:
            self._update_dimensions(())
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
