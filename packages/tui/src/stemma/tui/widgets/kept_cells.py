"""A ``DataTable`` that keeps rendered cells and lines while their values stay the same.

Textual's cell cache key holds a table-wide update counter, which showing other rows must
bump (positions, offsets and lines all change), so each filter keystroke rendered every
visible cell anew (~45-60 ms for 44 rows at load 2). :class:`KeptCellsTable` keeps a second
cache without the counter, keyed by what a cell's render depends on (its row key *and*
position, since the render carries the row index for mouse clicks; column, width, styles,
cursor and hover) and checked against the cell's value object (``is``), so a row whose cells
changed by any path is rendered again.

A line of the body is kept likewise (:meth:`KeptCellsTable._render_line`): assembling a row's
line from its cells (row styles, crop, ``Strip``) was still ~0.4 ms a line, ~20 ms for a
screen of rows shown again. It is keyed by its row's key and position, the crop, the width,
whether the cursor or the mouse is on that row, and the styles, and used only while the row's
cells (Textual's dict of them) are the same object; changing a row's cells drops its lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from textual.cache import LRUCache
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

if TYPE_CHECKING:
    from rich.segment import Segment
    from rich.style import Style
    from textual.strip import Strip


class KeptCellsTable(DataTable[object]):
    """``DataTable`` whose rendered body cells outlive its updates (see the module's docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        self._cells_drawn: LRUCache[tuple[object, ...], tuple[object, list[list[Segment]]]] = (
            LRUCache(10_000)
        )
        """Rendered cells: the value each was drawn from and its lines. Made first: Textual's
        ``__init__`` already notifies a style update."""
        self._lines_drawn: LRUCache[tuple[object, ...], tuple[object, Strip]] = LRUCache(2_000)
        """Drawn body lines: the row's cells (Textual's dict) each was drawn from and the line."""
        self._clearing_rows = False
        super().__init__(**kwargs)

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        """``DataTable._render_line``, a body line kept while its row's cells are the same.

        Textual's own key holds the update counter and the whole cursor and hover positions:
        every line is drawn again after any update or cursor move. For a row cursor, a line
        depends on the cursor and hover only through whether they are on its row. Tables with
        other cursors or an auto-width column (widths that change as cells do) draw as Textual.
        """
        render = super()._render_line  # pyright: ignore[reportPrivateUsage]
        if self.cursor_type != "row" or any(c.auto_width for c in self.columns.values()):
            return render(y, x1, x2, base_style)
        try:
            row_key, line = self._get_offsets(y)  # pyright: ignore[reportPrivateUsage]
        except LookupError:
            return render(y, x1, x2, base_style)
        row_index = self._row_locations.get(row_key)  # pyright: ignore[reportPrivateUsage]
        data: dict[RowKey, dict[ColumnKey, object]] = self._data  # pyright: ignore[reportPrivateUsage]
        cells = data.get(row_key)
        if row_index is None or cells is None:  # the header, or a row being removed
            return render(y, x1, x2, base_style)
        key = (
            row_key,
            row_index,
            line,
            x1,
            x2,
            self.size.width,
            self.cursor_coordinate.row == row_index,
            self.hover_coordinate.row == row_index,
            base_style,
            self.show_cursor,
            self._show_hover_cursor,  # pyright: ignore[reportPrivateUsage]
            self._pseudo_class_state,  # pyright: ignore[reportPrivateUsage]
            self.cell_padding,
            self.cursor_foreground_priority,
            self.cursor_background_priority,
        )
        kept = self._lines_drawn.get(key)
        if kept is not None and kept[0] is cells:
            return kept[1]
        strip = render(y, x1, x2, base_style)
        self._lines_drawn[key] = (cells, strip)
        return strip

    def forget_lines_of(self, row_key: object) -> None:
        """Drop the kept lines of the row with ``row_key``: its cells changed in place."""
        kept = self._lines_drawn.keys()  # (an LRUCache: not iterable itself)
        for key in [key for key in kept if key[0] == row_key]:
            self._lines_drawn.discard(key)

    def update_cell(
        self,
        row_key: RowKey | str,
        column_key: ColumnKey | str,
        value: object,
        *,
        update_width: bool = False,
    ) -> None:
        """``DataTable.update_cell``; the row's kept lines are dropped."""
        super().update_cell(row_key, column_key, value, update_width=update_width)
        self.forget_lines_of(row_key)

    def add_column(self, *args: Any, **kwargs: Any) -> ColumnKey:
        """``DataTable.add_column``: every row gets a cell, every kept line is stale."""
        self._lines_drawn.clear()
        return super().add_column(*args, **kwargs)

    def remove_column(self, column_key: ColumnKey | str) -> None:
        """``DataTable.remove_column``: every kept line is stale."""
        self._lines_drawn.clear()
        super().remove_column(column_key)

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list[list[Segment]]:
        """``DataTable._render_cell``, kept across updates while the cell's value is the same.

        Textual's own key (8.x) is the row and column keys, base style, cursor, hover and
        pseudo-classes, with the update counter; this one drops the counter and adds what the
        counter stood for: the row's position (in the render's click metadata and in
        ``fixed_rows``), the width, the padding and the row's height. Styles, zebra stripes,
        fixed rows or columns and the cursor's visibility clear it (:meth:`_clear_caches`).
        """
        render = super()._render_cell  # pyright: ignore[reportPrivateUsage]
        if column_index < 0:  # row labels: the dashboard has none, Textual's way
            return render(row_index, column_index, base_style, width, cursor, hover)
        column_key = self._column_locations.get_key(column_index)  # pyright: ignore[reportPrivateUsage]
        if column_key is None:
            return render(row_index, column_index, base_style, width, cursor, hover)
        if row_index < 0:  # the header: drawn again after every update too
            row_key: RowKey | None = self._header_row_key  # pyright: ignore[reportPrivateUsage]
            height = self.header_height
            value = self.columns[column_key].label
        else:
            row_key = self._row_locations.get_key(row_index)  # pyright: ignore[reportPrivateUsage]
            row = None if row_key is None else self.rows.get(row_key)
            if (
                row_key is None or row is None or (row.auto_height and row.height == 0)
            ):  # not measured yet
                return render(row_index, column_index, base_style, width, cursor, hover)
            height = row.height
            data: dict[RowKey, dict[ColumnKey, object]] = self._data  # pyright: ignore[reportPrivateUsage]
            value = data[row_key].get(column_key)
        key = (
            row_key,
            row_index,
            column_key,
            width,
            height,
            base_style,
            cursor,
            hover,
            self._show_hover_cursor,  # pyright: ignore[reportPrivateUsage]
            self._pseudo_class_state,  # pyright: ignore[reportPrivateUsage]
            self.cell_padding,
        )
        kept = self._cells_drawn.get(key)
        if kept is not None and kept[0] is value:
            return kept[1]
        lines = render(row_index, column_index, base_style, width, cursor, hover)
        self._cells_drawn[key] = (value, lines)
        return lines

    def clear(self, columns: bool = False) -> Self:
        """``DataTable.clear``; rendered cells are kept unless the columns go too.

        A kept cell is only used for the same value object at the same key and position, so
        rows shown again after a clear (a filter deleted) need not be rendered again.
        """
        self._clearing_rows = not columns
        try:
            return super().clear(columns)
        finally:
            self._clearing_rows = False

    def _clear_caches(self) -> None:
        """``DataTable._clear_caches``, and the cells kept across updates but by :meth:`clear`.

        Textual clears its caches when something a cell's render depends on but its cache key
        does not changes (the cursor shown or not, fixed rows or columns): so does this one.
        """
        super()._clear_caches()  # pyright: ignore[reportPrivateUsage]
        if not self._clearing_rows:
            self._cells_drawn.clear()
            self._lines_drawn.clear()

    def notify_style_update(self) -> None:
        """A change of styles (a theme, a pseudo-class): every kept cell is stale."""
        self._cells_drawn.clear()
        self._lines_drawn.clear()
        super().notify_style_update()
