"""Where the storage package's locks live; the locking itself is :class:`stemma.core.FileLock`."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

from stemma.core.crash_points import crash_point
from stemma.core.file_lock import FileLock
from stemma.core.store.locations import RootLayout
from stemma.storage.schemas import TableSpec


def table_lock_path(layout: RootLayout, spec: TableSpec | str) -> Path:
    """The lock serializing writers of one Delta table: ``locks/delta/{table}.lock``.

    ``spec`` is the table's spec, or its name under ``delta/`` (a table found in a bucket).
    """
    name = spec if isinstance(spec, str) else spec.name
    return layout.locks / "delta" / f"{name.replace('/', '.')}.lock"


def bundle_lock_path(layout: RootLayout, bundle: Path) -> Path:
    """The lock serializing stagers and committers of one bundle.

    It is ``locks/staging/{execution_run_id}.lock``: outside the bundle, so removing the bundle
    never removes the lock file other committers are queued on.
    """
    return layout.locks / "staging" / f"{bundle.name}.lock"


@contextmanager
def bundle_lock(layout: RootLayout, bundle: Path) -> Generator[None, None, None]:
    """Hold the lock of ``bundle``; on the way out, delete the lock file if the bundle is gone.

    The lock file is only ever deleted by its holder, and only once the bundle is gone. A waiter
    queued on the deleted file may then get it; it re-acquires on the current file when it sees
    its own was deleted, and in any case finds no bundle, which it reads as "already committed".

    Args:
        layout: the store root the bundle belongs to.
        bundle: the bundle directory (it need not exist).

    Yields:
        Nothing; the lock is held for the body of the ``with`` block.
    """
    path = bundle_lock_path(layout, bundle)
    while True:
        lock = FileLock(path)
        lock.acquire()
        if path.exists():
            break
        lock.release()  # its holder deleted it under us: queue on the current file instead
    try:
        yield
    finally:
        try:
            if not bundle.exists():
                path.unlink(missing_ok=True)
                crash_point("lock.bundle_removed")
        finally:
            lock.release()
