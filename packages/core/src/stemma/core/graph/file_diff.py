"""Say which input file changed, for the key diffs of ``stemma explain`` and the lazy planner.

A step's key holds its input files by content: an ingestion step's ``files`` param lists
``{name, content_hash, size}`` per file, and a ``Path`` given to a lazy step becomes
``{"$file": {content_hash, size}}``. A field-by-field diff of those reads
``files[3].content_hash: '1a2b…' → '9f8e…'``, which leaves the reader to count files; these
lines name the file instead, with its old and new short hashes and sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard, cast

from stemma.core.graph.markers import FILE_TAG

SHORT_HASH = 8
"""Hex digits of a content hash shown: enough to tell two versions of a file apart."""


def is_file_entry(value: Mapping[str, Any]) -> bool:
    """Whether ``value`` is one input file's key: a named entry, or a ``$file`` marker."""
    if set(value) == {FILE_TAG} and isinstance(value[FILE_TAG], dict):
        return "content_hash" in value[FILE_TAG]
    return "content_hash" in value and "name" in value


def is_file_list(value: object) -> TypeGuard[list[dict[str, Any]]]:
    """Whether ``value`` is a non-empty list of named file entries (an ingestion's ``files``)."""
    if not isinstance(value, list) or not value:
        return False
    items = cast(list[object], value)
    return all(
        isinstance(item, dict)
        and is_file_entry(cast(dict[str, Any], item))
        and "name" in cast(dict[str, Any], item)
        for item in items
    )


def file_change(path: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """One line for a file whose key changed: its name, content and size, before and after."""
    before, after = _fields(old), _fields(new)
    name = _name(before, after)
    where = f"{path} {name}" if name else f"{path} (file)"
    parts: list[str] = []
    if before.get("content_hash") != after.get("content_hash"):
        parts.append(
            f"content {_short(before.get('content_hash'))} → {_short(after.get('content_hash'))}"
        )
    if before.get("size") != after.get("size"):
        parts.append(f"{_size(before.get('size'))} → {_size(after.get('size'))}")
    if before.get("path") != after.get("path"):
        parts.append(f"path {before.get('path')} → {after.get('path')}")
    return f"{where}: {', '.join(parts) or 'changed'}"


def file_list_changes(
    path: str, old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Lines for two lists of named files compared by name: changed, added and removed ones.

    By name, not position: a file added in the middle must read as one addition, not as every
    later file changing.
    """
    before = {str(entry["name"]): entry for entry in old}
    after = {str(entry["name"]): entry for entry in new}
    lines: list[str] = []
    for name in sorted(before.keys() | after.keys()):
        if name not in after:
            lines.append(f"{path}: removed {name} ({_summary(before[name])})")
        elif name not in before:
            lines.append(f"{path}: added {name} ({_summary(after[name])})")
        elif before[name] != after[name]:
            lines.append(file_change(path, before[name], after[name]))
    return lines


def _fields(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = entry.get(FILE_TAG)
    return cast(Mapping[str, Any], inner) if isinstance(inner, dict) else entry


def _name(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    old, new = before.get("name"), after.get("name")
    if old and new and old != new:
        return f"{old} → {new}"
    return str(new or old or "")


def _summary(entry: Mapping[str, Any]) -> str:
    return f"content {_short(entry.get('content_hash'))}, {_size(entry.get('size'))}"


def _short(content_hash: object) -> str:
    return str(content_hash)[:SHORT_HASH] if content_hash else "?"


def _size(size: object) -> str:
    return f"{size:,} bytes" if isinstance(size, int) else "? bytes"
