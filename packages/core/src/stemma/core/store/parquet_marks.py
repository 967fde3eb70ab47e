"""Whether a file looks like Parquet at all: there, its size, ``PAR1`` at both ends, its footer.

There: not missing. Its size: the one its table's log records. Its footer: a length that fits.

The cheap first look at a damaged table's data file, shared by ``stemma check`` (which then
reads the footer), by every read of a Delta table before polars or delta-rs touches a file
(:func:`first_unsound`), and by the dashboard (which must not load pyarrow for it): standard
library only.

Why before: polars' Delta scan takes each file's size from the table's log, so a file
overwritten or cut short (any other size) makes it read past the file's end, and it *panics*.
pyo3 turns the panic into an exception, but Rust has already printed ``thread '…' panicked at
crates/polars-io/…`` (with ``RUST_BACKTRACE=1``, a backtrace) on the process's stderr, where no
``except`` can take it back. A file found wrong here is never handed to it.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Iterable
from pathlib import Path

MAGIC = b"PAR1"
"""What a Parquet file starts and ends with."""
_TAIL = 8
"""The end of a Parquet file: its footer's length (4 bytes, little-endian), then ``PAR1``."""
_SMALLEST = len(MAGIC) + _TAIL
"""No Parquet file is shorter: ``PAR1``, the footer's length, ``PAR1`` (and a footer)."""
_CACHE_LIMIT = 200_000
"""Files remembered as sound before the memory is cleared (a dashboard left open for weeks)."""

_sound: dict[str, tuple[int, int]] = {}
"""Files found sound, by path: their size and modification time (ns) when they were."""
_sound_lock = threading.Lock()


def parquet_marks_problem(path: Path, expected_size: int | None = None) -> str | None:
    """What is wrong with ``path`` as a Parquet file at a glance; None if it looks whole.

    Reads at most 12 bytes: the first four and the last eight.

    Args:
        path: the file.
        expected_size: the size the table's log records for it, if known: a file of another
            size was replaced or cut short.
    """
    return _look(str(path), expected_size)[0]


def first_unsound(files: Iterable[tuple[str, int | None]]) -> tuple[str, str] | None:
    """The first of ``files`` that does not look like whole Parquet, with what is wrong with it.

    Each file is a path and the size its table's log records (None: not known). A file found
    sound is remembered by its path, size and modification time: looking at it again costs one
    ``stat``, and it is read again (12 bytes) only once it changed.

    Returns:
        ``(path, problem)`` (the problem in words, as :func:`parquet_marks_problem` says it), or
        None when every file looks sound.
    """
    for path, expected in files:
        known = _sound.get(path)
        if known is not None:
            try:
                stat = os.stat(path)
            except OSError:
                known = None
            else:
                if known == (stat.st_size, stat.st_mtime_ns) and expected in (None, known[0]):
                    continue
        problem, seen = _look(path, expected)
        if problem is not None:
            return path, problem
        with _sound_lock:
            if len(_sound) >= _CACHE_LIMIT:
                _sound.clear()
            _sound[path] = seen
    return None


def _look(path: str, expected_size: int | None) -> tuple[str | None, tuple[int, int]]:
    """What is wrong with the file (None if nothing), and its size and modification time."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return "is missing (the table's log still lists it)", (-1, -1)
    except OSError as err:
        return f"cannot be read ({err.strerror or err})", (-1, -1)
    try:
        stat = os.fstat(fd)
        return _problem(fd, stat.st_size, expected_size), (stat.st_size, stat.st_mtime_ns)
    except OSError as err:
        return f"cannot be read ({err.strerror or err})", (-1, -1)
    finally:
        os.close(fd)


def _problem(fd: int, size: int, expected_size: int | None) -> str | None:
    if size < _SMALLEST:
        return f"is not Parquet ({size} bytes, no PAR1 marks)"
    head = os.pread(fd, len(MAGIC), 0)
    tail = os.pread(fd, _TAIL, size - _TAIL)
    if head != MAGIC or tail[len(tail) - len(MAGIC) :] != MAGIC:
        return f"is not Parquet ({size} bytes, no PAR1 marks)"
    if expected_size is not None and size != expected_size:
        return f"is {size} bytes where the table's log says {expected_size} (replaced or cut short)"
    (footer,) = struct.unpack("<I", tail[: len(tail) - len(MAGIC)])
    if footer == 0 or footer > size - _SMALLEST:
        return f"has a damaged Parquet footer ({size} bytes, a footer of {footer} claimed)"
    return None
