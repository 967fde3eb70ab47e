"""Crash points: one hook at every place stemma writes durable state, for the crash harness.

Each durable write (a staged file, a sentinel, a rename out of staging, a Delta append, a lock
file, the live state, an ``OUT`` directory published) is followed by ``crash_point("name")``.
Unarmed, the call is one test of a module constant read at import: nothing is opened, no
environment is read again. Armed, by environment variables inherited by every process of a run
(workers, curators, SLURM elements on the same filesystem):

``STEMMA_CRASH_LOG=PATH``
    every point reached appends ``seq pid name`` to ``PATH`` (under ``flock``, so the lines of
    all the run's processes form one sequence): a clean run lists its points.
``STEMMA_CRASH_AT=N`` or ``STEMMA_CRASH_AT=NAME:K``
    the Nth point reached in the whole run, or the Kth time ``NAME`` is reached, kills the
    run: ``SIGKILL`` to the process group of the process that reached it, as a power cut
    would (a run started in its own session loses its orchestrator, workers and curators at
    once; a SLURM element loses its job step). Needs ``STEMMA_CRASH_LOG``, which counts the
    points across processes. ``NAME:K`` addresses a point whatever other points (a timer's
    heartbeat) did meanwhile.
``STEMMA_CRASH_SCOPE=process``
    kill only the process that reached the point (a worker the OOM killer took), not its
    group; ``group`` (the default) is the power cut.

See ``docs/design/0013-crash-points.md`` for the fault model and the points.
"""

from __future__ import annotations

import fcntl
import os
import signal

AT_ENV = "STEMMA_CRASH_AT"
"""The point that kills the run: ``N`` (the Nth of the run) or ``NAME:K``."""
LOG_ENV = "STEMMA_CRASH_LOG"
"""The file every point reached is appended to, one ``seq pid name`` line each."""
SCOPE_ENV = "STEMMA_CRASH_SCOPE"
"""What the armed point kills: ``group`` (the process group: the run) or ``process``."""


def _target(text: str) -> tuple[str | None, int] | None:
    """``(None, N)`` for ``N``, ``(NAME, K)`` for ``NAME:K``, ``None`` when unset.

    Raises:
        ValueError: anything else (a typo must not leave a harness believing it crashed).
    """
    text = text.strip()
    if not text:
        return None
    name, _, count = text.rpartition(":")
    if count.isdigit() and int(count) >= 1 and (name or ":" not in text):
        return (name or None, int(count))
    raise ValueError(
        f"${AT_ENV} must be N or NAME:K with N, K >= 1 (e.g. 12 or staging.sentinel:2), "
        f"got {text!r}"
    )


_LOG = os.environ.get(LOG_ENV, "").strip()
_TARGET = _target(os.environ.get(AT_ENV, ""))
if _TARGET is not None and not _LOG:
    raise ValueError(
        f"${AT_ENV} is set but ${LOG_ENV} is not: set {LOG_ENV} to a file path; it counts the "
        "points reached across the run's processes"
    )
_SCOPE = os.environ.get(SCOPE_ENV, "").strip() or "group"
if _SCOPE not in ("group", "process"):
    raise ValueError(f"${SCOPE_ENV} must be group or process, got {_SCOPE!r}")
ARMED = bool(_LOG)
"""Whether this process reports its points (read once, at import)."""


def crash_point(name: str) -> None:
    """Report reaching the durable write point ``name``; the armed one kills the run here.

    Args:
        name: dotted, stable, what was just made durable (``staging.sentinel``).
    """
    if ARMED:
        _reached(name)


def _reached(name: str) -> None:
    fd = os.open(_LOG, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by the kernel even when SIGKILL follows
        seq, nth = _counts(fd, name)
        os.write(fd, f"{seq} {os.getpid()} {name}\n".encode())
    finally:
        os.close(fd)
    if _TARGET is not None and _TARGET in ((None, seq), (name, nth)):
        if _SCOPE == "process":
            os.kill(os.getpid(), signal.SIGKILL)
        os.killpg(os.getpgrp(), signal.SIGKILL)


def _counts(fd: int, name: str) -> tuple[int, int]:
    """This point's number in the run, and how many times ``name`` was reached with it."""
    size = os.fstat(fd).st_size
    lines = os.pread(fd, size, 0).decode().splitlines() if size else []
    same = sum(1 for line in lines if line.split(" ", 2)[-1] == name)
    return len(lines) + 1, same + 1
