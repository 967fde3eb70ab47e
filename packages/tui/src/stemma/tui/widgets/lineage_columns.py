"""Which lineage columns fit a table's width, and each edge's cells in them.

Every edge names the far artifact, the step and the execution that made it: those three are
always shown (at 80 columns a table has room for little else). Role and type come when there
is room; spare width goes to the step name first, since ids are already told apart by their
first hex digits.
"""

from __future__ import annotations

from dataclasses import dataclass

from stemma.tui.client import LineageEdge
from stemma.tui.client.views import SHORT_ID

CELL_PADDING = 2
"""A ``DataTable`` pads each cell by one column on either side."""
SCROLLBAR = 2
"""Kept free for the vertical scrollbar a long list shows."""
ITSELF = "itself"


@dataclass(frozen=True, kw_only=True)
class LineageColumn:
    """One column of a lineage table."""

    key: str
    title: str
    width: int


@dataclass(frozen=True, kw_only=True)
class _Spec:
    key: str
    title: str
    least: int
    most: int


_SHOWN_ORDER = ("id", "step", "execution", "role", "type")
_BY_PRIORITY = (
    _Spec(key="id", title="artifact", least=SHORT_ID, most=16),
    _Spec(key="step", title="step", least=10, most=32),
    _Spec(key="execution", title="execution", least=SHORT_ID + 1, most=SHORT_ID + 1),
    _Spec(key="role", title="role", least=7, most=12),
    _Spec(key="type", title="type", least=6, most=10),
)
_GROW = ("step", "id", "role", "type")


def lineage_columns(width: int) -> tuple[LineageColumn, ...]:
    """The columns that fit a table ``width`` columns wide (inside its border), widened to fill.

    The first three always come, even when they do not fit (the table then scrolls sideways).
    """
    room = width - SCROLLBAR
    chosen: dict[str, int] = {}
    for index, spec in enumerate(_BY_PRIORITY):
        needed = sum(chosen.values()) + spec.least + CELL_PADDING * (len(chosen) + 1)
        if index >= 3 and needed > room:
            break
        chosen[spec.key] = spec.least
    spare = room - sum(chosen.values()) - CELL_PADDING * len(chosen)
    most = {spec.key: spec.most for spec in _BY_PRIORITY}
    for key in _GROW:
        if key in chosen and spare > 0:
            grown = min(most[key], chosen[key] + spare)
            spare -= grown - chosen[key]
            chosen[key] = grown
    titles = {spec.key: spec.title for spec in _BY_PRIORITY}
    return tuple(
        LineageColumn(key=key, title=titles[key], width=chosen[key])
        for key in _SHOWN_ORDER
        if key in chosen
    )


def edge_cells(edge: LineageEdge, columns: tuple[LineageColumn, ...]) -> tuple[str, ...]:
    """The edge's text in each of ``columns``, each cut to its column's width."""
    values = {
        "id": ITSELF if edge.itself else edge.artifact_id,
        "step": edge.step_name or "?",
        "execution": edge.short_execution,
        "role": edge.role,
        "type": edge.artifact_type,
    }
    return tuple(
        _step_fit(values["step"], column.width)
        if column.key == "step"
        else values[column.key][: column.width]
        for column in columns
    )


def _step_fit(name: str, width: int) -> str:
    """``name`` in ``width`` columns: its last dotted parts first, as they tell steps apart.

    ``example.slow_copy`` in 10 columns is ``…slow_copy``; a last part that alone is too long
    is cut at its end too (``…slow_co…``).
    """
    if len(name) <= width:
        return name
    parts = name.split(".")
    while len(parts) > 1:
        parts = parts[1:]
        tail = "…" + ".".join(parts)
        if len(tail) <= width:
            return tail
    return (name if name == parts[0] else "…" + parts[0])[: width - 1] + "…"
