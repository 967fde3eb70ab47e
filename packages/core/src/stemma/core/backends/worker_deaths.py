"""Telling which worker of a broken pool died on its own, and saying why in one message.

When one worker of a ``ProcessPoolExecutor`` dies, the pool breaks: it SIGTERMs its other
workers and fails every unit in flight. Only the unit whose worker died first is guilty; the
others were running beside it. Each unit records the pid that took it (a marker file written by
:func:`~stemma.core.backends.worker_process.run_tracked`), so the backend can blame the unit
whose worker died of something other than the pool's own SIGTERM, and run the rest again.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from pathlib import Path

from stemma.core.backends.base import WorkerCrashedError
from stemma.core.backends.memory_at_death import memory_at_death


def guilty_pids(exit_codes: Mapping[int, int]) -> set[int]:
    """The dead workers to blame, from each dead worker's exit code (negative: a signal).

    A broken pool SIGTERMs the survivors, so those are innocent; if every death looks like a
    SIGTERM (someone else sent it), nobody can be told apart and all are blamed.
    """
    dead = {pid: code for pid, code in exit_codes.items() if code != 0}
    own = {pid for pid, code in dead.items() if code != -signal.SIGTERM}
    return own or set(dead)


def marker_pid(marker: Path) -> int | None:
    """The pid a unit's marker names, or None if no worker ever took the unit."""
    try:
        return int(marker.read_text())
    except (OSError, ValueError):
        return None


def crash_error(
    exit_code: int | None, peak_rss_kb: int | None, *, guilty: bool = True
) -> WorkerCrashedError:
    """The error a unit whose worker died fails with: how it died, and its peak memory.

    A guilty worker (it died first, on its own) killed by SIGKILL was most likely taken by the
    OOM killer: its error then also says how much memory the host had left and the cgroup's
    limit, found now (``memory_at_death``), and carries them as ``memory``.
    """
    how = describe_exit(exit_code) if exit_code is not None else "unknown cause"
    if guilty and exit_code == -signal.SIGKILL:
        facts = memory_at_death(peak_rss_kb)
        return WorkerCrashedError(
            f"a worker process died while running this unit ({how}, likely for memory: "
            f"{facts.describe()}). If so, give the operation more memory or fewer artifacts "
            "per unit",
            exit_codes=[-signal.SIGKILL],
            peak_rss_mb=None if peak_rss_kb is None else peak_rss_kb / 1024,
            memory=facts.as_metadata(),
        )
    memory = f"; peak worker memory {peak_rss_kb / 1024:.0f} MiB" if peak_rss_kb else ""
    return WorkerCrashedError(
        f"a worker process died while running this unit ({how}){memory}. If it was killed "
        "for memory, give the operation more memory or fewer artifacts per unit",
        exit_codes=[exit_code] if exit_code is not None else [],
        peak_rss_mb=None if peak_rss_kb is None else peak_rss_kb / 1024,
    )


def describe_exit(code: int | None) -> str:
    """How a process ended, in words: ``killed by SIGKILL``, ``exit code 3``."""
    if code is None or code >= 0:
        return f"exit code {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process on this host (not gone, not a zombie), from /proc."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def peak_rss_kb(pid: int | None) -> int | None:
    """A live process's peak resident memory in KiB (``VmHWM``), or None."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None
