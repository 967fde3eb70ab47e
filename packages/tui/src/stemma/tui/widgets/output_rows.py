"""The step screen's outputs tab: each output artifact's role, then its short id, name and type.

A 32-hex id tells a reader nothing; the name the artifact had when it was made does
(``3f2a91c0 data_3.csv``), as the artifact screen's lineage shows it, and so does the type a
lazy step gave its output (``3f2a91c0 feat/count (csv)``, as ``stemma lineage`` says it). No
Textual, no I/O.
"""

from __future__ import annotations

from stemma.tui.client.views import SHORT_ID, StepView

OUTPUT_WIDTH = 56
"""The artifact column's width: a short id, a name and a type; a longer name is cut at its end,
the type kept."""


def output_rows(view: StepView) -> list[tuple[str, str, str]]:
    """``(role, artifact id, shown)`` per output, by role; ``shown`` is the short id, name, type.

    The full id stays in the row (a filter matches it, Enter opens it) beside what is shown.
    """
    rows: list[tuple[str, str, str]] = []
    for role, ids in sorted(view.outputs.items()):
        for artifact_id in ids:
            name = view.output_names.get(artifact_id, "")
            kind = view.output_types.get(artifact_id)
            rows.append((role, artifact_id, _shown(artifact_id, name, kind)))
    return rows


def _shown(artifact_id: str, name: str, kind: str | None) -> str:
    """``3f2a91c0 name (type)`` in :data:`OUTPUT_WIDTH`: the name cut, never the type."""
    suffix = f" ({kind})" if kind else ""
    shown = f"{artifact_id[:SHORT_ID]} {name}" if name else artifact_id
    room = OUTPUT_WIDTH - len(suffix)
    if len(shown) > room:
        shown = shown[: max(room - 1, SHORT_ID)] + "…"
    return (shown + suffix)[:OUTPUT_WIDTH]
