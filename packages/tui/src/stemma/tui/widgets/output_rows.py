"""The step screen's outputs tab: each output artifact's role, then its short id and name.

A 32-hex id tells a reader nothing; the name the artifact had when it was made does
(``3f2a91c0 data_3.csv``), as the artifact screen's lineage shows it. No Textual, no I/O.
"""

from __future__ import annotations

from stemma.tui.client.views import SHORT_ID, StepView

OUTPUT_WIDTH = 56
"""The artifact column's width: a short id and a name; a longer name is cut at its end."""


def output_rows(view: StepView) -> list[tuple[str, str, str]]:
    """``(role, artifact id, shown)`` per output, by role; ``shown`` is the short id and name.

    The full id stays in the row (a filter matches it, Enter opens it) beside what is shown.
    """
    rows: list[tuple[str, str, str]] = []
    for role, ids in sorted(view.outputs.items()):
        for artifact_id in ids:
            name = view.output_names.get(artifact_id, "")
            shown = f"{artifact_id[:SHORT_ID]} {name}" if name else artifact_id
            if len(shown) > OUTPUT_WIDTH:
                shown = shown[: OUTPUT_WIDTH - 1] + "…"
            rows.append((role, artifact_id, shown))
    return rows
