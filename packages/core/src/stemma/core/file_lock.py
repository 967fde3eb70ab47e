"""Exclusive file locks across threads and processes: one runner per step, one table writer.

``flock`` rather than a lease file with heartbeats: the kernel releases it when its holder dies,
even by ``kill -9``, so there is no takeover timeout to tune and no stale lease to steal. Linux
maps ``flock`` onto NFS byte-range locks, so it also holds across nodes on a shared filesystem.
Separate ``open()`` calls get separate locks, so threads of one process exclude each other too.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

_FIRST_WAIT = 0.005
_LONGEST_WAIT = 0.5


class FileLock:
    """An exclusive, blocking lock on ``path``; use it as a context manager."""

    def __init__(self, path: Path, *, create_parents: bool = True) -> None:
        """Prepare a lock on ``path`` (created if missing).

        Args:
            path: the lock file.
            create_parents: create its directory first. Pass ``False`` when the directory
                vanishing means there is nothing left to guard: acquiring then raises
                ``FileNotFoundError``.
        """
        self.path = path
        self.create_parents = create_parents
        self._fd: int | None = None

    def acquire(self, timeout: float | None = None) -> bool:
        """Wait for the lock; return False if ``timeout`` ran out.

        Without a timeout the wait blocks in the kernel (no polling latency); with one, it
        polls with backoff.
        """
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except FileNotFoundError:
            if not self.create_parents:
                raise
            # (made only when missing: a wave commit takes thousands of locks in a row, and a
            # mkdir before each cost a fifth of each)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            acquired = self._wait(fd, timeout)
        except BaseException:  # interrupted (KeyboardInterrupt included): never leak the fd
            os.close(fd)
            raise
        if acquired:
            self._fd = fd
        else:
            os.close(fd)
        return acquired

    @staticmethod
    def _wait(fd: int, timeout: float | None) -> bool:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return True
        deadline = time.monotonic() + timeout
        wait = _FIRST_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(wait)
                wait = min(wait * 2, _LONGEST_WAIT)
                continue
            return True

    def release(self) -> None:
        """Release the lock; closing the descriptor drops it."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
