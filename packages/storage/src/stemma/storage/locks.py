"""Exclusive file locks that hold across the threads of one process and across processes.

``flock`` locks belong to an open file description, so each acquisition opens the lock file
afresh: two threads of one process exclude each other exactly as two processes do.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

from stemma.core.layout import RootLayout
from stemma.storage.schemas import TableSpec


def table_lock_path(layout: RootLayout, spec: TableSpec) -> Path:
    """The lock serializing writers of one Delta table: ``locks/delta/{table}.lock``."""
    return layout.locks / "delta" / f"{spec.name.replace('/', '.')}.lock"


@contextmanager
def exclusive_lock(path: Path, *, create_parents: bool = True) -> Generator[None, None, None]:
    """Hold an exclusive ``flock`` on ``path`` for the duration of the ``with`` block.

    Args:
        path: the lock file; created if missing.
        create_parents: create the lock file's directory first. Pass ``False`` when the
            directory vanishing means there is nothing left to guard.

    Raises:
        FileNotFoundError: ``create_parents`` is false and the directory does not exist.
    """
    if create_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        # Closing the descriptor releases the lock.
        os.close(fd)
