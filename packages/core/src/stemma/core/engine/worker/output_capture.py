"""A worker's stdout and stderr, file descriptors included, appended to a unit's tool output log.

What a unit's tool printed is kept (its tail in the execution record, all of it in the failure
log: :mod:`stemma.core.store.failure_logs`); capturing it is the worker's part.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from stemma.core.backends import worker_stop
from stemma.core.store.failure_logs import tail_of


@dataclass
class CapturedOutput:
    """What :func:`capture_output` caught, once its block has ended."""

    tail: str | None = None
    """The log's last lines (:func:`~stemma.core.store.failure_logs.tail_of`); None if empty."""


@contextmanager
def capture_output(log_path: Path) -> Generator[CapturedOutput]:
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

    Args:
        log_path: the file to append to; created if missing.
    """
    for stream in (sys.stdout, sys.stderr):
        _flush(stream)
    saved: list[tuple[int, int | None]] = []
    captured = CapturedOutput()
    with (
        log_path.open("a+b") as raw,
        log_path.open("a", encoding="utf-8", errors="replace", buffering=1) as text,
    ):
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


def _flush(stream: object) -> None:
    flush = getattr(stream, "flush", None)
    if callable(flush):
        with suppress(OSError, ValueError):
            flush()
