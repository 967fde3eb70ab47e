"""An artifact's content as the dashboard previews it: CSV as a table, JSON pretty, else facts."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from stemma.tui.wording import counted, noun_for

PREVIEW_ROWS = 50
PREVIEW_BYTES = 64 * 1024


def preview_bytes(content: bytes, extension: str) -> tuple[str, str, tuple[tuple[str, ...], ...]]:
    """``(kind, text, rows)`` for content: ``table`` rows for CSV, ``json`` or ``text`` text.

    Only the first :data:`PREVIEW_BYTES` are looked at, so a huge artifact previews as fast as
    a small one.
    """
    head = content[:PREVIEW_BYTES]
    text = head.decode("utf-8", errors="replace")
    ext = extension.lower()
    if ext in (".csv", ".tsv"):
        reader = csv.reader(io.StringIO(text), delimiter="\t" if ext == ".tsv" else ",")
        rows: list[tuple[str, ...]] = []
        for row in reader:
            rows.append(tuple(row))
            if len(rows) > PREVIEW_ROWS:
                break
        return "table", "", tuple(rows)
    if ext == ".json" or text.lstrip().startswith(("{", "[")):
        try:
            return "json", json.dumps(json.loads(content), indent=2, sort_keys=True), ()
        except ValueError:
            pass
    if "\x00" in text:
        return "none", f"{counted(len(content), 'byte')} of binary content", ()
    rest = len(content) - len(head)
    more = f"\n… {rest} more {noun_for(rest, 'byte')}" if rest > 0 else ""
    return "text", text + more, ()


def preview_file(path: Path) -> tuple[str, str, tuple[tuple[str, ...], ...]]:
    """A file reference's preview: its content when it is a readable file, else what it is."""
    if path.is_dir():
        names = sorted(p.name for p in path.iterdir())[:PREVIEW_ROWS]
        return "text", f"directory {path}\n" + "\n".join(names), ()
    try:
        with path.open("rb") as handle:
            content = handle.read(PREVIEW_BYTES)
    except OSError as err:
        return "none", f"{path}: {err.strerror or err}", ()
    return preview_bytes(content, path.suffix)
