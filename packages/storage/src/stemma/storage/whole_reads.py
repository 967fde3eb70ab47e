"""Reading a large content whole into a new ``bytes``, in huge pages where the kernel has them.

A unit that reads a 100 MB input gets it as ``bytes``, and the cost of a fresh 100 MB ``bytes``
is mostly not the disk: glibc maps it anew, and the kernel faults it in 25,600 pages of 4 KiB
(0.045 s even from the page cache, where ``cat`` reads into one small buffer and pays none of
it). Transparent huge pages cut that to some fifty faults, but most kernels give them only to
memory that asks (``/sys/kernel/mm/transparent_hugepage/enabled``: ``madvise``). So the
``bytes`` is made unfilled, its buffer asked for huge pages (``madvise(MADV_HUGEPAGE)``), and
the file read straight into it: on this machine 0.055 s -> 0.020 s for 100 MB from the page
cache (benchmarks/README.md, "A unit that reads a large input: huge pages").

Filling a ``bytes`` after making it is what CPython's own readers do (``FileIO.readall`` makes
one unfilled and reads into it): nothing else holds it until it is returned, and its hash is
not computed before. Where any of it is missing (not CPython, not Linux, a ``madvise`` refused)
the read is a plain one, with the same result.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import mmap
import os
from collections.abc import Callable
from pathlib import Path

HUGE_PAGE_BYTES = 2 << 20
"""The size of a transparent huge page on x86-64 and most arm64 kernels."""
HUGE_READ_BYTES = 4 << 20
"""Files from this size on are read into huge pages; smaller ones by a plain read."""


def read_whole(path: Path) -> bytes:
    """The whole file at ``path``, as one new ``bytes``.

    Raises:
        FileNotFoundError: there is no such file.
        OSError: the file could not be read, or ended before the size it had when opened.
    """
    with open(path, "rb", buffering=0) as file:
        size = os.fstat(file.fileno()).st_size
        made = _unfilled(size) if size >= HUGE_READ_BYTES else None
        if made is None:
            return file.read()
        content, view = made
        done = 0
        while done < size:
            got = file.readinto(view[done:])
            if not got:
                raise OSError(
                    f"{path} ended after {done} of its {size} bytes: changed as it was read"
                )
            done += got
        return content


def copy_whole(data: memoryview) -> bytes:
    """``bytes(data)``, in huge pages when large: a store's reply, copied out of its buffer."""
    given = data.cast("B")
    made = _unfilled(given.nbytes) if given.nbytes >= HUGE_READ_BYTES else None
    if made is None:
        return bytes(given)
    content, view = made
    view[:] = given
    return content


def _unfilled(size: int) -> tuple[bytes, memoryview] | None:
    """A new ``bytes`` of ``size`` bytes not yet filled, and a writable view of its buffer."""
    make = _bytes_maker()
    if make is None:
        return None
    content: bytes = make(None, size)
    address = ctypes.cast(ctypes.c_char_p(content), ctypes.c_void_p).value
    if address is None:
        return None
    _ask_for_huge_pages(address, size)
    view = memoryview((ctypes.c_char * size).from_address(address)).cast("B")
    return content, view


@functools.cache
def _bytes_maker() -> Callable[[None, int], bytes] | None:
    """CPython's ``PyBytes_FromStringAndSize``, through a prototype of our own (None elsewhere)."""
    try:
        prototype = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_ssize_t)
        return prototype(("PyBytes_FromStringAndSize", ctypes.pythonapi))
    except (AttributeError, OSError):  # not CPython
        return None


def _ask_for_huge_pages(address: int, size: int) -> None:
    """``madvise(MADV_HUGEPAGE)`` over the whole huge pages of a buffer (nothing elsewhere)."""
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is None:
        return
    start = -(-address // HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES
    end = (address + size) // HUGE_PAGE_BYTES * HUGE_PAGE_BYTES
    if end <= start:
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), ctypes.c_int(advice))
