"""Keying raw file inputs by content, without rehashing unchanged files (see identity-and-keys.md).

A ``Path`` handed to ``apply`` is an input file or tree: its key is what it holds, not its
name, so editing the file reruns the step and moving it does not. A file's hash is cached per
process by (path, size, mtime), so a graph that names one big file many times reads it once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any, cast

from stemma.core.canonical import escape_key
from stemma.core.errors import UnfingerprintableError
from stemma.core.graph.markers import FILE_TAG
from stemma.core.identity import digest_tree

_cache: dict[tuple[str, int, int], dict[str, object]] = {}
_lock = threading.Lock()


def input_file_key(path: Path, where: str) -> dict[str, object]:
    """The key of an input file or directory: its size and content hash, not its path.

    Raises:
        UnfingerprintableError: the path does not exist (naming where it sits in the config).
    """
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise UnfingerprintableError(
            f"{where}: input file {str(path)!r} does not exist. A Path input is keyed by its "
            "content; pass a str instead if it is only a name, or OUT for the step's output"
        ) from None
    if not path.is_file():  # a tree: a nested edit does not touch the top's mtime, so no cache
        return _key(path)
    marker = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    with _lock:
        cached = _cache.get(marker)
    if cached is None:
        cached = _key(path)
        with _lock:  # fine if two threads race: both computed the same value
            _cache[marker] = cached
    return cached


def _key(path: Path) -> dict[str, object]:
    digest = digest_tree(path)
    return {"content_hash": digest.content_hash, "size": digest.size}


def input_files_read(inputs: Mapping[str, Any], keyed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The input files a step's key reads, for its records: where each sits, its path, its key.

    ``inputs`` are the step's arguments as given (a ``Path`` where a file was named) and
    ``keyed`` the same arguments as its key holds them (``StepSpec.config["inputs"]``: the
    file's ``{"$file": {"content_hash", "size"}}``, never its path). Each file is
    ``{"input": "source", "path": "/abs/raw.csv", "content_hash": …, "size": …}``, its
    ``input`` said as the argument it sits in (``files[0]``, ``paths['train']``). Nothing here
    enters a key: lineage shows the file a step read from these.
    """
    found: list[dict[str, Any]] = []
    for name, value in inputs.items():
        _files_in(value, keyed.get(escape_key(name)), name, found)
    return found


def _files_in(value: Any, keyed: Any, where: str, found: list[dict[str, Any]]) -> None:
    if isinstance(value, PurePath):
        key = cast(Mapping[str, Any], keyed).get(FILE_TAG) if isinstance(keyed, Mapping) else None
        if isinstance(key, Mapping):
            path = os.path.abspath(value)
            found.append({"input": where, "path": path, **cast(Mapping[str, Any], key)})
        return
    if isinstance(value, Mapping) and isinstance(keyed, Mapping):
        items = cast(Mapping[Any, Any], value)
        known = cast(Mapping[str, Any], keyed)
        for key, item in items.items():
            if isinstance(key, str):
                _files_in(item, known.get(escape_key(key)), f"{where}[{key!r}]", found)
        return
    if isinstance(value, list | tuple) and isinstance(keyed, list):
        seq = cast(list[Any] | tuple[Any, ...], value)
        keys = cast(list[Any], keyed)
        for index, (item, key) in enumerate(zip(seq, keys, strict=False)):
            _files_in(item, key, f"{where}[{index}]", found)
