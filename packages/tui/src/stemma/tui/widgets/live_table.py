"""A data table whose rows can change one at a time without drawing the others again.

Textual's ``DataTable.update_cell`` bumps one table-wide counter that is part of every cache
key (the row renderables, each cell's and row's lines, each screen line), then refreshes the
whole widget: one changed cell renders every visible cell again. On the runs list, a running
run's duration changes each second, and that re-render of 44 rows of 6 cells was 12-14% of a
core with nothing else happening (issue 6's idle budget is 2%).

:meth:`LiveTable.update_row_at` writes the row's cells, drops only the cache entries of that
row, and repaints only its lines. The cache layout is Textual's private business (8.x); the
tests in ``tests/tui/test_live_table.py`` fail if an upgrade leaves a stale row or repaints
the others, rather than the dashboard silently showing old text.

Filling a table is the other cost: a filter keystroke on the runs list of 10,000 runs clears
the table and adds the rows that pass. ``DataTable.add_row`` sets the cursor reactive and
lists the columns again for each row, and its idle pass then measures every new cell with
rich (~60,000 measures, ~2 s at load 3) to widen auto-width columns. The dashboard's columns
have fixed widths, so :meth:`LiveTable.add_rows` adds the rows in one pass and the idle pass
measures nothing when no column is auto-width (same rows, cursor, messages and size as
``DataTable``'s; ``tests/tui/test_live_table.py`` compares the two). And a filter shows the
same rows again and again (typing ``z``, then deleting it): :meth:`LiveTable.replace_rows` takes
each row with a key, and a row shown before with the same cells object is put back as it was
made rather than made again.

Each filter keystroke then draws the rows on screen: Textual's cell cache key holds the
table-wide update counter, which ``replace_rows`` must bump (row positions, offsets and lines
all changed), so every visible cell was rendered anew (~45-60 ms for 44 rows at load 2).
:meth:`LiveTable._render_cell` keeps a second cache of rendered cells without the counter,
keyed by what a cell's render depends on (its row key *and* position, since the render carries
the row index for mouse clicks; column, width, styles, cursor and hover) and checked against
the cell's value object (``is``), so a row whose cells changed by any path is rendered again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import zip_longest
from typing import TYPE_CHECKING, Any, Self

from textual._two_way_dict import TwoWayDict
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.geometry import Size
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, DuplicateKey, Row, RowKey

if TYPE_CHECKING:
    from rich.segment import Segment
    from rich.style import Style

_Made = tuple[Sequence[object], Row, dict[ColumnKey, object]]
"""A row as :meth:`LiveTable.replace_rows` made it: the cells it was given, Textual's row and
the row's cells by column, ready to be put back while the caller hands the same cells."""


class LiveTable(DataTable[object]):
    """A ``DataTable`` for rows that change while others do not, and tables filtered often.

    :meth:`update_row_at` repaints one row; :meth:`replace_rows` shows another set of rows.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._cells_drawn: LRUCache[tuple[object, ...], tuple[object, list[list[Segment]]]] = (
            LRUCache(10_000)
        )
        """Rendered body cells across updates of the table: the value each was drawn from and
        its lines (see the module's docstring). Made first: Textual's
        ``__init__`` already notifies a style update."""
        self._clearing_rows = False
        super().__init__(**kwargs)
        self._made: dict[str, _Made] = {}
        """The rows :meth:`replace_rows` made, by key."""
        self._most_shown = 0
        """The most rows :meth:`replace_rows` showed at once: the made rows kept are at most
        twice that (a filter that hides most rows keeps them for when it is deleted)."""

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
        """Show ``rows`` instead of the table's rows: as ``clear()`` then ``add_row`` each.

        Each row is ``(key, cells)``, added as ``add_row(*cells, key=key)`` would (one line, no
        label); the cursor goes back to the top, as after ``clear()``. A row this method made
        before for the same key and the same ``cells`` object (``is``, not ``==``: a caller
        that keeps a finished row's cells hands the same tuple) is put back, not made again.

        Args:
            rows: ``(key, cells)`` per row, in the order shown; keys are unique.

        Raises:
            ValueError: When a row has more cells than the table has columns.
            DuplicateKey: When two rows have the same key.
        """
        self.clear()
        columns = [column.key for column in self.ordered_columns]
        made = self._made
        shown: list[_Made] = []
        for key, cells in rows:
            entry = made.get(key)
            if entry is None or entry[0] is not cells:
                if len(cells) > len(columns):
                    raise ValueError(f"replace_rows: {len(cells)} cells for {len(columns)} columns")
                entry = (cells, Row(RowKey(key), 1), dict(zip_longest(columns, cells)))
                made[key] = entry
            shown.append(entry)
        keys = [entry[1].key for entry in shown]
        locations = dict(zip(keys, range(len(keys)), strict=True))
        if len(locations) != len(keys):
            raise DuplicateKey(f"replace_rows: {len(keys) - len(locations)} keys given twice")
        # Textual's bookkeeping of rows (8.x), as add_row leaves it, in one pass.
        self._row_locations = TwoWayDict(locations)  # pyright: ignore[reportPrivateUsage]
        self.rows.update(zip(keys, (entry[1] for entry in shown), strict=True))
        data: dict[RowKey, dict[ColumnKey, object]] = self._data  # pyright: ignore[reportPrivateUsage]
        data.update(zip(keys, (entry[2] for entry in shown), strict=True))
        if any(column.auto_width for column in self.columns.values()):
            self._new_rows.update(keys)  # pyright: ignore[reportPrivateUsage]
        self._most_shown = max(self._most_shown, len(shown))
        if len(made) > 2 * max(self._most_shown, 1000):  # keys gone for good: keep the shown
            self._made = {entry[1].key.value or "": entry for entry in shown}
        self._rows_added(was_empty=True)
        # What Textual would list again from its dicts (10,000 rows: ~4 ms each, hashing
        # every RowKey in Python), known here: the rows in order, one line each.
        count: int = self._update_count  # pyright: ignore[reportPrivateUsage]
        ordered = [entry[1] for entry in shown]
        self._ordered_row_cache[(len(ordered), count)] = ordered  # pyright: ignore[reportPrivateUsage]
        self._offset_cache[count] = [(row.key, 0) for row in ordered]  # pyright: ignore[reportPrivateUsage]

    def update_cell(
        self,
        row_key: RowKey | str,
        column_key: ColumnKey | str,
        value: object,
        *,
        update_width: bool = False,
    ) -> None:
        """``DataTable.update_cell``; the row is no longer the one :meth:`replace_rows` made."""
        self._made.pop(row_key.value or "" if isinstance(row_key, RowKey) else row_key, None)
        super().update_cell(row_key, column_key, value, update_width=update_width)

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

    def notify_style_update(self) -> None:
        """A change of styles (a theme, a pseudo-class): every kept cell is stale."""
        self._cells_drawn.clear()
        super().notify_style_update()

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
        region = self._get_row_region(row_index)  # pyright: ignore[reportPrivateUsage]
        lines = range(region.y, region.bottom)
        _discard(self._cell_render_cache, lambda key: key[0] == row_key)  # pyright: ignore[reportPrivateUsage]
        _discard(self._row_render_cache, lambda key: key[0] == row_key)  # pyright: ignore[reportPrivateUsage]
        _discard(self._line_cache, lambda key: key[0] in lines)  # pyright: ignore[reportPrivateUsage]


def _discard(cache: LRUCache[Any, Any], dropped: Callable[[tuple[Any, ...]], bool]) -> None:
    """Drop the entries of ``cache`` whose key (a tuple) is ``dropped``."""
    for key in list(cache.keys()):
        if dropped(key):
            cache.discard(key)
