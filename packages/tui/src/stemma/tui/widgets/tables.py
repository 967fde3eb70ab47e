"""Typed access to the screens' tables (``query_one`` alone loses the cell type)."""

from __future__ import annotations

from rich.text import Text
from textual.dom import DOMNode

from stemma.tui.widgets.live_table import LiveTable

Table = LiveTable
"""Every table in the dashboard: cells are strings, numbers or rich ``Text``."""


def table_at(node: DOMNode, selector: str) -> Table:
    """The table matching ``selector`` under ``node``."""
    return node.query_one(selector, LiveTable)


def new_table(table_id: str, *, cursor: bool = True, zebra: bool = False) -> Table:
    """A row-cursor table with the dashboard's defaults."""
    return LiveTable(id=table_id, cursor_type="row", show_cursor=cursor, zebra_stripes=zebra)


def plain(*values: object) -> tuple[object, ...]:
    """Table cells as given, with each string made a rich ``Text``.

    A table reads a string cell or column label as markup: ``list[int]`` in an error, a run
    name or a CSV cell lost its brackets (``[int]`` is a style tag to rich), and parsing cost
    the first frame ~0.1 ms a cell.
    """
    return tuple(Text(value) if isinstance(value, str) else value for value in values)
