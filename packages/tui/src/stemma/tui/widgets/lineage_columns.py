"""Which lineage columns fit a table's width, and each edge's cells in them.

Every edge names the far artifact (a short id and its file name) and the step that made it:
those two are always shown, as they are what a reader looks for. The execution's id comes next
when it fits (at 80 columns it does not: Enter on a row still names it), then role and type.
Spare width goes to the artifact's name and the step's first, then to the rest; ids keep only
as many hex digits as tell artifacts apart, fewer when the column is narrow.
"""

from __future__ import annotations

from dataclasses import dataclass

from stemma.tui.client import LineageEdge
from stemma.tui.client.step_tree import short_name
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
    _Spec(key="id", title="artifact", least=20, most=SHORT_ID + 1 + 32),
    _Spec(key="step", title="step", least=11, most=32),
    _Spec(key="execution", title="execution", least=SHORT_ID + 1, most=SHORT_ID + 1),
    _Spec(key="role", title="role", least=7, most=12),
    _Spec(key="type", title="type", least=6, most=10),
)
_ALWAYS = 2
"""The artifact and the step come even when they do not fit (the table then scrolls)."""
_COMFORT = {"id": 30, "step": 20}
"""Widths the artifact and step columns get before any later column is shown."""
_GROW = (
    ("id", _COMFORT["id"]),
    ("step", _COMFORT["step"]),
    ("id", None),
    ("step", None),
    ("role", None),
    ("type", None),
)
"""Where spare width goes, in turn, and up to what width (None: the column's most)."""
NARROW_ID = 6
"""Hex digits of an id in an artifact column narrower than :data:`WIDE_ID_FROM`."""
WIDE_ID_FROM = 26


def lineage_columns(width: int) -> tuple[LineageColumn, ...]:
    """The columns that fit a table ``width`` columns wide (inside its border), widened to fill.

    The artifact and step columns always come, even when they do not fit (the table then
    scrolls sideways).
    """
    room = width - SCROLLBAR
    chosen: dict[str, int] = {}
    for index, spec in enumerate(_BY_PRIORITY):
        # A later column comes only if the name and step still get their comfortable widths.
        wanted = sum(max(w, _COMFORT.get(k, 0)) for k, w in chosen.items()) + spec.least
        if index >= _ALWAYS and wanted + CELL_PADDING * (len(chosen) + 1) > room:
            break
        chosen[spec.key] = spec.least
    spare = room - sum(chosen.values()) - CELL_PADDING * len(chosen)
    most = {spec.key: spec.most for spec in _BY_PRIORITY}
    for key, cap in _GROW:
        if key in chosen and spare > 0:
            grown = max(chosen[key], min(cap or most[key], chosen[key] + spare))
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
        "id": ITSELF,
        "step": edge.step_name or "?",
        "execution": edge.short_execution,
        "role": edge.role,
        "type": edge.artifact_type,
    }
    return tuple(
        short_name(values["step"], column.width)
        if column.key == "step"
        else _artifact_fit(edge, column.width)
        if column.key == "id" and not edge.itself
        else values[column.key][: column.width]
        for column in columns
    )


def _artifact_fit(edge: LineageEdge, width: int) -> str:
    """The far artifact's short id and name in ``width`` columns, the name cut at its end.

    ``3f2a91c0 data_3.csv``; in a narrow column ``3f2a91 data_3.c…``. An artifact without a
    name shows its id alone.
    """
    digits = SHORT_ID if width >= WIDE_ID_FROM else NARROW_ID
    if not edge.name:
        return edge.artifact_id[: max(width, digits)]
    text = f"{edge.artifact_id[:digits]} {edge.name}"
    return text if len(text) <= width else text[: width - 1] + "…"
