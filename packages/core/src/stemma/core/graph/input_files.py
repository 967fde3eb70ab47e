"""Keying raw file inputs by content, without rehashing unchanged files (see identity-and-keys.md).

A ``Path`` handed to ``apply`` is an input file or tree: its key is what it holds, not its
name, so editing the file reruns the step and moving it does not. A file's hash is cached per
process by (path, size, mtime), so a graph that names one big file many times reads it once.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from stemma.core.errors import UnfingerprintableError
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
