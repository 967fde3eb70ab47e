"""Which columns of a table fit a terminal's width, and how wide each is: pure, no Textual.

A table names its columns in the order shown, each with the least and most room it wants and
a priority: priority 0 always comes (the table scrolls sideways if even those do not fit);
the others come in priority order while they fit at their least width. What is left widens
the columns named to grow, in that order, up to their most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CELL_PADDING = 2
"""A ``DataTable`` pads each cell by one column on either side."""
SCROLLBAR = 2
"""Kept free for the vertical scrollbar a long list shows."""


@dataclass(frozen=True, kw_only=True)
class ColumnSpec:
    """One column a table may show."""

    key: str
    title: str
    least: int
    """Width below which the column is not worth showing."""
    most: int = 0
    """Width it may grow to with room to spare (``least`` when 0)."""
    priority: int = 0
    """0: always shown; otherwise the lower, the sooner it comes as the terminal widens."""


@dataclass(frozen=True, kw_only=True)
class FittedColumn:
    """One column as shown: its key, title and width in cells."""

    key: str
    title: str
    width: int


def fit_columns(
    width: int, specs: Sequence[ColumnSpec], *, grow: Sequence[str] = ()
) -> tuple[FittedColumn, ...]:
    """The columns of ``specs`` (in their order) that fit a table ``width`` cells wide.

    Args:
        width: the table's width (the terminal's, for a table that spans it).
        specs: every column the table may show, in the order shown.
        grow: keys of the columns that take the spare room, first come first served.
    """
    room = width - SCROLLBAR
    chosen = {spec.key: spec.least for spec in specs if spec.priority == 0}
    for spec in sorted((s for s in specs if s.priority > 0), key=lambda s: s.priority):
        if _used(chosen) + spec.least + CELL_PADDING > room:
            break  # later ones have lower priority: none jumps the queue
        chosen[spec.key] = spec.least
    spare = room - _used(chosen)
    most = {spec.key: max(spec.most, spec.least) for spec in specs}
    for key in grow:
        if key in chosen and spare > 0:
            grown = min(most[key], chosen[key] + spare)
            spare -= grown - chosen[key]
            chosen[key] = grown
    return tuple(
        FittedColumn(key=spec.key, title=spec.title, width=chosen[spec.key])
        for spec in specs
        if spec.key in chosen
    )


def cut(text: str, width: int) -> str:
    """``text`` in ``width`` cells: whole when it fits, else cut with ``…`` at its end."""
    if len(text) <= width:
        return text
    return text[: max(0, width - 1)] + "…" if width > 0 else ""


def cut_middle(text: str, width: int) -> str:
    """``text`` in ``width`` cells, cut in its middle: its start and its end stay.

    For a command line, whose end (the arguments) tells runs of one script apart as much as its
    start does. The end keeps the larger share.
    """
    if len(text) <= width:
        return text
    if width < 3:
        return cut(text, width)
    tail = (width - 1) * 3 // 5
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


def _used(chosen: dict[str, int]) -> int:
    return sum(chosen.values()) + CELL_PADDING * len(chosen)
