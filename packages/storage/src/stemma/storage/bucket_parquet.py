"""A Parquet file in a bucket looked at as ``stemma check`` looks at one on disk, by ranged reads.

The same verdicts in the same words as on a filesystem
(:func:`~stemma.core.store.parquet_marks.parquet_marks_problem`, then pyarrow's reading of the
footer): ``PAR1`` at both ends, the size the table's log records, a footer length that fits,
and a footer that parses. The object's size comes from the listing the caller made; what is
read is its first 4 bytes and its last 64 KiB (pyarrow's first read of a footer), in one
request when they are less than 1 MiB apart (``obstore.get_ranges`` joins them), else two, and
one more only for a footer longer than 64 KiB. Nothing native reads the file's data pages.
"""

from __future__ import annotations

import io
import struct
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
from pyarrow import ArrowException

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

MAGIC = b"PAR1"
"""What a Parquet file starts and ends with."""
_TAIL = 8  # the footer's length (4 bytes, little-endian), then PAR1
_SMALLEST = len(MAGIC) + _TAIL
MISSING = "is missing (the table's log still lists it)"
"""A data file the log lists that is not there, in the words the local look uses."""
FOOTER_READ = 64 * 1024
"""What pyarrow reads first of a file's end to find its footer (its default)."""


def object_problem(store: Any, key: str, size: int, expected_size: int | None) -> str | None:
    """What is wrong with the object ``key`` of ``store`` as a Parquet file; None if sound.

    Args:
        store: an ``obstore`` store.
        key: the object's path in the store.
        size: its size, from a listing.
        expected_size: the size the table's log records for it (None: not known).

    Raises:
        Exception: the store's own error, when a read fails other than by a missing object
            (the caller says it, naming the root).
    """
    if size < _SMALLEST:
        return f"is not Parquet ({size} bytes, no PAR1 marks)"
    import obstore

    tail_start = max(0, size - FOOTER_READ)
    try:
        head, tail = obstore.get_ranges(store, key, starts=[0, tail_start], ends=[len(MAGIC), size])
    except FileNotFoundError:  # removed since it was listed (obstore's NotFoundError is one)
        return MISSING
    found = marks_problem(bytes(head), bytes(tail)[-_TAIL:], size, expected_size)
    if found is not None:
        return found
    try:
        pq.read_metadata(_ObjectFile(store, key, size, tail_start, bytes(tail)))  # pyright: ignore[reportUnknownMemberType, reportArgumentType]
    except (OSError, ArrowException):
        return f"has a damaged Parquet footer ({size} bytes)"
    return None


def marks_problem(head: bytes, tail: bytes, size: int, expected_size: int | None) -> str | None:
    """The look :mod:`stemma.core.store.parquet_marks` takes of a local file, on bytes read.

    Args:
        head: the file's first 4 bytes.
        tail: its last 8 (the footer's length, then ``PAR1``).
        size: its size.
        expected_size: the size the table's log records (None: not known).
    """
    if size < _SMALLEST or head != MAGIC or tail[-len(MAGIC) :] != MAGIC:
        return f"is not Parquet ({size} bytes, no PAR1 marks)"
    if expected_size is not None and size != expected_size:
        return f"is {size} bytes where the table's log says {expected_size} (replaced or cut short)"
    (footer,) = struct.unpack("<I", tail[: _TAIL - len(MAGIC)])
    if footer == 0 or footer > size - _SMALLEST:
        return f"has a damaged Parquet footer ({size} bytes, a footer of {footer} claimed)"
    return None


class _ObjectFile(io.RawIOBase):
    """An object as a read-only file for pyarrow: served from the bytes already fetched.

    A read outside them (a footer longer than what was fetched) fetches its range.
    """

    def __init__(self, store: Any, key: str, size: int, start: int, data: bytes) -> None:
        super().__init__()
        self._store, self._key, self._size = store, key, size
        self._start, self._data = start, data
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        end = min(self._position + len(view), self._size)
        if end <= self._position:
            return 0
        if not self._start <= self._position or end > self._start + len(self._data):
            import obstore

            fetched = obstore.get_range(self._store, self._key, start=self._position, end=end)
            self._start, self._data = self._position, bytes(fetched)
        chunk = self._data[self._position - self._start : end - self._start]
        view[: len(chunk)] = chunk
        self._position += len(chunk)
        return len(chunk)
