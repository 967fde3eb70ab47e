"""Handles on a ``ProcessPoolExecutor``'s worker processes, which the executor keeps private.

The local backend must see its workers to weigh a death (their exit codes), to sample their
memory, to start them early and to kill them at a cancel; the executor offers none of this, so
these helpers read its private fields in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess


def worker_processes(pool: ProcessPoolExecutor) -> list[BaseProcess]:
    """The pool's live worker processes (a broken pool forgets its own)."""
    # The executor keeps its workers in a private dict; it is the only handle on them.
    found: dict[int, BaseProcess] | None = getattr(pool, "_processes", None)
    return list((found or {}).values())


def kill_workers(pool: ProcessPoolExecutor | None) -> None:
    """SIGKILL every worker of ``pool`` and reap it."""
    for process in worker_processes(pool) if pool is not None else []:
        if process.is_alive():
            process.kill()
            process.join(timeout=2)


def is_broken(pool: ProcessPoolExecutor) -> bool:
    """Whether a worker's death broke ``pool`` (it then takes no more units)."""
    return bool(getattr(pool, "_broken", False))


def dead_exit_codes(known: Mapping[int, BaseProcess]) -> dict[int, int]:
    """Each dead worker's exit code, by pid (waiting a moment for them to be reaped)."""
    # A dead worker's sentinel is ready before the kernel lets it be reaped: join those.
    ending = set(wait([p.sentinel for p in known.values() if p.exitcode is None], timeout=0))
    for process in known.values():
        if process.exitcode is None and process.sentinel in ending:
            process.join(timeout=1)
    return {pid: process.exitcode for pid, process in known.items() if process.exitcode is not None}
