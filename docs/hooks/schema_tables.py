"""An mkdocs hook: the table-schema reference is generated from ``stemma.storage.schemas``.

A page holding the marker ``<!-- stemma:table-schemas -->`` gets, in its place, one section per
Delta table with every column's name, Arrow type and nullability, read from the schema constants
the store itself writes with. The reference can therefore never drift from the code.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- stemma:table-schemas -->"


def schema_sections() -> str:
    """One markdown section per table, in commit order."""
    from stemma.storage.schemas import COMMIT_ORDER

    sections: list[str] = []
    for spec in COMMIT_ORDER:
        key = f" Rows are deduplicated by `{spec.key}`." if spec.key else ""
        lines = [
            f"### `{spec.name}`",
            "",
            f"Staged as `{spec.staged_name}`; commit phase {spec.phase}.{key}",
            "",
            "| column | Arrow type | nullable |",
            "|---|---|---|",
        ]
        for field in spec.arrow_schema:
            nullable = "yes" if field.nullable else "no"
            lines.append(f"| `{field.name}` | `{field.type}` | {nullable} |")
        sections.append("\n".join(lines))
    return "\n\n".join(sections)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker with the generated tables."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, schema_sections())
