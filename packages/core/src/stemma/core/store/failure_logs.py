"""What a failed execution leaves a human to read: captured tool output and failure logs.

:func:`capture_output` sends everything the process prints, its subprocesses included, to a
log file; :func:`tail_lines` keeps the last lines for the execution record; and
:func:`write_failure_log` writes ``logs/failures/step_{N}_{op}/{execution_run_id}.log``.
"""

from __future__ import annotations

import datetime as dt
import os
from contextlib import suppress
from pathlib import Path
from typing import BinaryIO

from stemma.core.store.locations import RootLayout, write_readable_log

TAIL_LINES = 100
"""How many of the tool's last lines an execution record and a failure log keep."""
_TAIL_BYTES = 1 << 20


def tail_lines(path: Path, limit: int = TAIL_LINES) -> str | None:
    """The last ``limit`` lines of a text file (its last MiB at most); None if empty or absent."""
    try:
        with path.open("rb") as stream:
            return tail_of(stream, limit)
    except OSError:
        return None


def tail_of(stream: BinaryIO, limit: int = TAIL_LINES) -> str | None:
    """:func:`tail_lines` of a file already open for reading; None if it is empty."""
    size = stream.seek(0, os.SEEK_END)
    if not size:  # (most units print nothing: no read at all)
        return None
    stream.seek(max(0, size - _TAIL_BYTES))
    lines = stream.read().decode("utf-8", errors="replace").splitlines()[-limit:]
    return "\n".join(lines) or None


def failure_log_path(root: Path, step_number: int, operation: str, execution_run_id: str) -> Path:
    """Where the failure log of one execution goes under the store root ``root``."""
    folder = RootLayout(root).logs / "failures" / f"step_{step_number}_{operation}"
    return folder / f"{execution_run_id}.log"


def write_failure_log(
    root: Path,
    *,
    step_number: int,
    operation: str,
    execution_run_id: str,
    backend: str,
    error: str,
    tool_output: str | None,
    when: dt.datetime | None = None,
) -> Path | None:
    """Write a human-readable log of a failed execution; best effort.

    Args:
        root: the store root.
        step_number: the step's number.
        operation: the operation's name.
        execution_run_id: the failed execution's run id.
        backend: the backend that ran it.
        error: the full traceback (or the operation's own error message).
        tool_output: the last lines the tool printed, if any.
        when: the time of the failure; now when omitted.

    Returns:
        The log's path, or None when it could not be written (never raises ``OSError``).
    """
    path = failure_log_path(root, step_number, operation, execution_run_id)
    stamp = (when or dt.datetime.now(dt.UTC)).isoformat()
    parts = [
        f"execution_run_id: {execution_run_id}",
        f"operation: {operation}",
        f"step: {step_number}",
        f"backend: {backend}",
        f"time: {stamp}",
        "",
        "--- error ---",
        error.rstrip(),
        "",
        f"--- tool output (last {TAIL_LINES} lines) ---",
        (tool_output or "(none captured)").rstrip(),
        "",
    ]
    return write_readable_log(path, parts)


def append_worker_log(path: Path, worker_log: str) -> None:
    """Add the scheduler's log of the worker to a failure log written earlier; best effort.

    The worker writes the failure log as the unit fails; its element's stdout and stderr are
    complete only once the element has ended, so they are appended by the orchestrator.
    """
    section = f"\n--- worker log (the scheduler's stdout and stderr) ---\n{worker_log.rstrip()}\n"
    with suppress(OSError), path.open("a", encoding="utf-8") as stream:
        stream.write(section)
