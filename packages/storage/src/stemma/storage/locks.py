"""Where the storage package's locks live; the locking itself is :class:`stemma.core.FileLock`."""

from __future__ import annotations

from pathlib import Path

from stemma.core.layout import RootLayout
from stemma.storage.schemas import TableSpec


def table_lock_path(layout: RootLayout, spec: TableSpec) -> Path:
    """The lock serializing writers of one Delta table: ``locks/delta/{table}.lock``."""
    return layout.locks / "delta" / f"{spec.name.replace('/', '.')}.lock"
