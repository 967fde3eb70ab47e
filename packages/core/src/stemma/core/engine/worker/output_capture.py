"""A worker's stdout and stderr, file descriptors included, appended to a unit's tool output log.

What a unit's tool printed is kept (its tail in the execution record, all of it in the failure
log: :mod:`stemma.core.store.failure_logs`); capturing it is the worker's part.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Generator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from stemma.core.backends import worker_stop
from stemma.core.store.failure_logs import tail_lines, tail_of


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

    One open file serves both and gives the tail back (``CapturedOutput.tail``, set as the block
    ends): a unit used to open its log twice here and a third time for the tail, a tenth of a
    worker's time on units that print nothing (benchmarks/README.md, "issue 34").

    Args:
        log_path: the file to append to; created if missing.
    """
    for stream in (sys.stdout, sys.stderr):
        _flush(stream)
    saved: list[tuple[int, int | None]] = []
    captured = CapturedOutput()
    with log_path.open("a+b") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", line_buffering=True)
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
            captured.tail = _tail(text, raw, log_path)


def _tail(text: io.TextIOWrapper, raw: BinaryIO, log_path: Path) -> str | None:
    """The log's tail from the open file, or by its path if the operation closed the file."""
    if raw.closed:  # (closing sys.stdout closed the file under it)
        return tail_lines(log_path)
    text.detach()  # the file stays open for its tail (and is closed with ``raw``)
    return tail_of(raw)


def _flush(stream: object) -> None:
    flush = getattr(stream, "flush", None)
    if callable(flush):
        with suppress(OSError, ValueError):
            flush()
