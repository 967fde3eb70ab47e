"""Ids: xxh3_128 over content (artifacts) or over canonical JSON (keys), 32 hex characters."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xxhash

from stemma.core.canonical import canonical_json, dumps_plain

ID_LENGTH = 32
_CHUNK = 1 << 20


def content_id(content: bytes) -> str:
    """Return the artifact id of ``content``: xxh3_128 over the bytes, as 32 hex characters."""
    return xxhash.xxh3_128_hexdigest(content)


def hash_canonical(value: Any) -> str:
    """Return the id of a config-like value: xxh3_128 over its canonical JSON encoding."""
    return xxhash.xxh3_128_hexdigest(canonical_json(value).encode())


def hash_plain(value: Any) -> str:
    """Like :func:`hash_canonical` for values already made canonical (skips the type checks)."""
    return hash_encoded(dumps_plain(value))


def hash_encoded(text: str) -> str:
    """The id of text already encoded canonically (by ``dumps_plain``, or byte for byte alike)."""
    return xxhash.xxh3_128_hexdigest(text.encode())


def file_content_hash(path: Path) -> str:
    """Hash one file's bytes in chunks, so a large output never has to fit in memory."""
    hasher = xxhash.xxh3_128()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            hasher.update(chunk)
    return hasher.hexdigest()


@dataclass(frozen=True, kw_only=True)
class TreeDigest:
    """The content of a file or a directory tree, summarized."""

    content_hash: str
    """xxh3_128 of the file, or of the sorted (relative path, size, file hash) list of a tree."""
    size: int
    """Total bytes of every regular file."""
    file_count: int
    """Number of regular files (1 for a single file, 0 for an empty directory)."""


def digest_tree(path: Path) -> TreeDigest:
    """Digest a file or a directory tree by content; symlinks are followed, order is sorted.

    Raises:
        FileNotFoundError: the tree holds a dangling symlink.
    """
    if path.is_file():
        return TreeDigest(
            content_hash=file_content_hash(path), size=path.stat().st_size, file_count=1
        )
    entries: list[tuple[str, int, str]] = []
    for dirpath, dirnames, filenames in os.walk(path, followlinks=True):
        dirnames.sort()
        for filename in sorted(filenames):
            file = Path(dirpath, filename)
            entries.append(
                (file.relative_to(path).as_posix(), file.stat().st_size, file_content_hash(file))
            )
    return TreeDigest(
        content_hash=hash_plain([list(entry) for entry in entries]),
        size=sum(size for _, size, _ in entries),
        file_count=len(entries),
    )


def file_ref_artifact_id(digest: TreeDigest, relative_path: str) -> str:
    """The id of a file-ref artifact: its content hash with its root-relative path and size."""
    return hash_plain(
        {"content_hash": digest.content_hash, "path": relative_path, "size": digest.size}
    )
