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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.widgets import DataTable


class LiveTable(DataTable[object]):
    """A ``DataTable`` with :meth:`update_row_at`, for rows that change while others do not."""

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
        self._forget_row(row_index, row_key)
        self.refresh_row(row_index)

    def _forget_row(self, row_index: int, row_key: object) -> None:
        """Drop the cached renders of one row: its renderables, cells, row lines and screen lines.

        The screen-line cache is keyed by the line's y in the table (header included), which is
        where ``_get_row_region`` puts the row.
        """
        count = self._update_count  # pyright: ignore[reportPrivateUsage]
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
