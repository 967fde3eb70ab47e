"""Waiting for a table's writer lock in the background: fairly, and never past a script's end.

The automatic compaction (:mod:`stemma.storage.auto_compaction`) takes the lock every append
holds. Polling for it (``flock`` with ``LOCK_NB`` and a backoff) loses every time to a writer
that commits back to back: that writer is queued in the kernel and is handed the lock the moment
it is released, while the poller looks again milliseconds later. Measured, a compaction polling
for ``artifacts/index`` got the lock once in 600 back-to-back commits. So the lock is waited for
in the kernel, as the appends wait, by a daemon thread of its own, while the compaction's thread
waits for that thread with a deadline: it gives up when the deadline passes or when the
script's main thread has ended, and the daemon then lets go of the lock as soon as it gets it.
A daemon blocked in ``flock`` holds up nothing at exit; the kernel drops its request with the
process.
"""

from __future__ import annotations

import threading
import time

from stemma.core.file_lock import FileLock

_LOOK_SECONDS = 0.05
"""How often the waiting thread looks whether the main thread is still there."""


class _Taker:
    """One wait for one lock: the daemon that takes it, and whether it is still wanted."""

    def __init__(self, lock: FileLock) -> None:
        self._lock = lock
        self._guard = threading.Lock()
        self._taken = threading.Event()
        self._abandoned = False

    def take(self) -> None:
        self._lock.acquire()  # blocks in the kernel, queued as every append is
        with self._guard:
            if self._abandoned:
                self._lock.release()
                return
            self._taken.set()

    def wait(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not self._taken.wait(_LOOK_SECONDS):
            if time.monotonic() < deadline and threading.main_thread().is_alive():
                continue
            with self._guard:
                if self._taken.is_set():
                    return True
                self._abandoned = True
                return False
        return True


def acquire_within(lock: FileLock, seconds: float) -> bool:
    """Take ``lock`` within ``seconds``; ``False`` (and not held) if not, or if the script ended.

    On ``True`` the caller holds the lock and releases it with ``lock.release()``.
    """
    taker = _Taker(lock)
    threading.Thread(target=taker.take, name="stemma-compaction-lock", daemon=True).start()
    return taker.wait(seconds)
