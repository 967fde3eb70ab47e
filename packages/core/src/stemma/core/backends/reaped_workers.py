"""Spawned worker processes whose reaping keeps their peak memory: the kernel's count, at death.

A worker the OOM killer takes dies by SIGKILL with no chance to say anything, and where its
peak resident size (``VmHWM``) is read goes with it: a dead process's memory map is freed before
it becomes a zombie, so a zombie's ``/proc/PID/status`` has no ``VmHWM`` any more, and once
reaped it has no entry at all. Sampling ``/proc`` while the worker runs
(``LocalBackend.sample_memory``) sees the peak only up to the last sample: a worker that takes
gigabytes in the half second before it is killed would be reported far below its real peak,
and a worker reporting its own peak with each result says nothing of the unit that kills it.

The kernel keeps the peak of a process as it exits, though, and hands it to the parent that
reaps it: ``wait4``'s ``ru_maxrss`` (KiB; the largest of the process's own peak and that of any
child it waited for, a tool it ran). So the workers of a spawn pool here are reaped by ``wait4``
instead of ``waitpid`` (:class:`MeasuredPopen`), and keep what it says on their process object,
whoever reaps them: the pool's own thread, a join, the backend weighing a death. Forkserver
workers are reaped by the fork server, not by us: for them only the samples are known.
"""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing.context import BaseContext, SpawnContext, SpawnProcess
from multiprocessing.popen_spawn_posix import Popen
from multiprocessing.process import BaseProcess


class MeasuredPopen(Popen):
    """A spawned process reaped with ``wait4``, keeping its peak resident size."""

    peak_rss_kb: int | None = None
    """``ru_maxrss`` of the process once reaped (KiB); None while it lives."""

    def poll(self, flag: int = os.WNOHANG) -> int | None:
        """The exit code once the process has ended (reaping it and keeping its peak), or None.

        ``popen_fork.Popen.poll`` with ``wait4`` for ``waitpid``: every reap of a process goes
        through here (``is_alive``, ``exitcode``, ``join``, the pool's own thread).
        """
        if self.returncode is None:
            try:
                pid, status, usage = os.wait4(self.pid, flag)
            except OSError:  # not yet created (as ``popen_fork`` says), or reaped elsewhere
                return None
            if pid == self.pid:
                self.peak_rss_kb = usage.ru_maxrss
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


class MeasuredSpawnProcess(SpawnProcess):
    """A spawned process reaped by :class:`MeasuredPopen` (importable: the child unpickles it)."""

    @staticmethod
    # (its stub's win32 branch says a win32 Popen; a spawn here is POSIX's)
    def _Popen(process_obj: BaseProcess) -> Popen:  # noqa: N802  # pyright: ignore[reportIncompatibleMethodOverride]
        return MeasuredPopen(process_obj)


class MeasuredSpawnContext(SpawnContext):
    """The spawn context, its processes reaped with ``wait4``."""

    Process = MeasuredSpawnProcess


def pool_context(start_method: str) -> BaseContext:
    """The context a local pool starts its workers with: spawn's measured, else as asked."""
    if start_method == "spawn":
        return MeasuredSpawnContext()
    return multiprocessing.get_context(start_method)


def reaped_peak_rss_kb(process: BaseProcess | None) -> int | None:
    """A reaped worker's peak resident size in KiB (``ru_maxrss``), or None if not known."""
    popen = getattr(process, "_popen", None)  # (multiprocessing keeps its Popen private)
    return getattr(popen, "peak_rss_kb", None)
