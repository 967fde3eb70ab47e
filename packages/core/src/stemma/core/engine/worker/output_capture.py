"""A worker's stdout and stderr, file descriptors included, appended to a unit's tool output log.

What a unit's tool printed is kept (its tail in the execution record, all of it in the failure
log: :mod:`stemma.core.store.failure_logs`); capturing it is the worker's part.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Generator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from stemma.core.backends import worker_stop
from stemma.core.store.failure_logs import tail_of


@dataclass
class CapturedOutput:
    """What :func:`capture_output` caught, once its block has ended."""

    tail: str | None = None
    """The log's last lines (:func:`~stemma.core.store.failure_logs.tail_of`); None if empty."""


@dataclass
class _LogFiles:
    """The two files a capture writes through: the descriptors' and ``sys.stdout``'s."""

    path: Path
    raw: BinaryIO
    text: TextIO

    @classmethod
    def open(cls, path: Path) -> _LogFiles:
        raw = path.open("a+b")
        try:
            text = path.open("a", encoding="utf-8", errors="replace", buffering=1)
        except BaseException:
            raw.close()
            raise
        return cls(path, raw, text)

    def still_at(self, path: Path) -> bool:
        """Whether these files are still open and still the file at ``path``."""
        if self.raw.closed or self.text.closed or path != self.path:
            return False
        try:
            held, there = os.fstat(self.raw.fileno()), os.stat(path)
        except OSError:
            return False
        # (while held open, the file's inode cannot be reused by another file)
        return (held.st_ino, held.st_dev) == (there.st_ino, there.st_dev)

    def close(self) -> None:
        for stream in (self.text, self.raw):
            with suppress(OSError, ValueError):
                stream.close()


_held = threading.local()
"""Per thread, the log files its last ``keep_open`` capture left open (``files``)."""


def _files_for(log_path: Path, *, keep_open: bool) -> _LogFiles:
    held: _LogFiles | None = getattr(_held, "files", None)
    if held is not None and keep_open and held.still_at(log_path):
        return held
    let_go_of_logs()
    files = _LogFiles.open(log_path)
    if keep_open:
        _held.files = files
    return files


def let_go_of_logs() -> None:
    """Close the log files this thread's captures kept open (at the end of a worker's pack)."""
    held: _LogFiles | None = getattr(_held, "files", None)
    _held.files = None
    if held is not None:
        held.close()


@contextmanager
def capture_output(log_path: Path, *, keep_open: bool = False) -> Generator[CapturedOutput]:
    """Append this process's stdout and stderr to ``log_path`` while the block runs.

    File descriptors 1 and 2 are redirected, so subprocesses that inherit them are captured too,
    and ``sys.stdout`` / ``sys.stderr`` are replaced, so Python output goes there even when they
    had been swapped (as pytest does). Process-wide: one capture at a time per process, which is
    how a worker runs its units.

    The file the descriptors write to gives the tail back too (``CapturedOutput.tail``, set as
    the block ends): a unit used to open its log a third time for the tail, and read it even
    when it printed nothing (benchmarks/README.md, "issue 34"). ``sys.stdout`` keeps a text
    file of its own, not a wrapper of that one: units of the ``local-thread`` backend capture
    side by side in one process, and a wrapper let go while another thread still flushed it
    through its ``sys.stdout`` crashed the interpreter.

    A spare sandbox's log is the same file unit after unit (emptied between them), so with
    ``keep_open`` its two files stay open for this thread's next capture at the same path
    instead of being opened and closed around each unit, until :func:`let_go_of_logs`.

    Args:
        log_path: the file to append to; created if missing.
        keep_open: leave the files open for the next capture of this thread at ``log_path``.
    """
    for stream in (sys.stdout, sys.stderr):
        _flush(stream)
    saved: list[tuple[int, int | None]] = []
    captured = CapturedOutput()
    files = _files_for(log_path, keep_open=keep_open)
    raw, text = files.raw, files.text
    try:
        old_out, old_err = sys.stdout, sys.stderr
        try:
            with worker_stop.held():  # a time-limit stop never leaves the fds half swapped
                for fd in (1, 2):
                    try:
                        original: int | None = os.dup(fd)
                    except OSError:  # the fd was closed: leave it closed afterwards
                        original = None
                    saved.append((fd, original))
                    os.dup2(raw.fileno(), fd)
                sys.stdout = sys.stderr = text
            yield captured
        finally:
            with worker_stop.held():
                with suppress(ValueError):  # the operation closed sys.stdout: nothing to flush
                    text.flush()
                sys.stdout, sys.stderr = old_out, old_err
                for fd, original in saved:
                    if original is None:
                        os.close(fd)
                    else:
                        os.dup2(original, fd)
                        os.close(original)
            captured.tail = tail_of(raw)
    finally:
        if not keep_open:
            files.close()


def _flush(stream: object) -> None:
    flush = getattr(stream, "flush", None)
    if callable(flush):
        with suppress(OSError, ValueError):
            flush()
