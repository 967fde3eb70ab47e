"""The local backend: a pool of spawned worker processes that ignore Ctrl-C.

Spawn (or forkserver), never fork: the orchestrator has delta-rs loaded, and a forked child of a
process with Rust threads can deadlock. Workers ignore SIGINT so that Ctrl-C reaches only the
orchestrator, which decides how hard to stop them (``worker_process``).

A worker that dies (OOM killer, segfault, ``kill -9``) breaks the whole pool, and the pool fails
every unit in flight. Only the unit whose worker died is failed, with
:class:`WorkerCrashedError` naming how it died and its peak memory; the units that were merely
running beside it go to a fresh pool, up to :data:`MAX_RESUBMITS` times (``worker_deaths``). A
worker killed by SIGKILL (the OOM killer's signal) is judged killed for memory: its error also
carries the host's memory and the cgroup's limit as the death was found (``memory_at_death``).
Its peak is the kernel's own count, kept as the pool reaps it (``reaped_workers``), not only
the last sample of ``/proc``.

A run starts one worker as soon as it knows a step will execute (``start_early``: as it opens a
root with no history, else when its first step misses the cache; its imports pass while the
orchestrator opens the store or plans the step; a fully cached run starts none); the first
submit starts every other worker at once, each warming up in its initializer: the half second a
worker spends importing polars and stemma's operations passes while the first units run
elsewhere, instead of in front of the first unit it is given later (the pool would otherwise
spawn one worker per submit). Once every unit is settled, shutdown kills the workers rather than
waiting for them: they hold no work, and nobody should wait for a warm-up nothing will use.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from stemma.core.backends.base import WaveRequest
from stemma.core.backends.local_units import (
    LinkedFuture,
    UnitTask,
    settle_once,
    terminated_error,
)
from stemma.core.backends.main_module import main_hidden
from stemma.core.backends.pool_processes import (
    dead_exit_codes,
    is_broken,
    kill_workers,
    worker_processes,
)
from stemma.core.backends.reaped_workers import pool_context, reaped_peak_rss_kb
from stemma.core.backends.worker_deaths import crash_error, guilty_pids, marker_pid, peak_rss_kb
from stemma.core.backends.worker_process import init_worker, run_tracked, signals_blocked
from stemma.core.cancel_levels import CancelLevel, cancel_grace
from stemma.core.temp_dirs import owned_temp_dir

_START_METHODS = ("spawn", "forkserver")
LOCAL_CANCEL_GRACE = 2.0
"""Seconds a force cancel gives local workers between SIGTERM and SIGKILL, by default."""
MAX_RESUBMITS = 2
"""How many times a unit taken down by another unit's dying worker is run again."""


class LocalBackend:
    """Runs units on up to ``max_workers`` local processes."""

    name = "local"
    queues_whole_waves = False

    def __init__(
        self,
        max_workers: int | None = None,
        *,
        start_method: str = "spawn",
        warm: bool = True,
        import_main: bool = True,
        cancel_grace_seconds: float | None = None,
    ) -> None:
        """Prepare the pool; every worker starts on the first submit.

        Args:
            max_workers: worker processes; the machine's CPU count when None.
            start_method: ``spawn`` or ``forkserver``.
            warm: workers import the Pipeline worker's and the store's modules on start
                (``worker_process.warm_up``); off for pools that run other functions.
            import_main: workers run the main script again, as spawned workers do, to find
                what is defined there; off when nothing they run is (``main_module``).
            cancel_grace_seconds: at a force cancel, how long workers have between SIGTERM and
                SIGKILL (raise it for tools that clean up on SIGTERM; a hard cancel waits for
                nothing); None for ``$STEMMA_CANCEL_GRACE_SECONDS``, else 2 s.

        Raises:
            ValueError: an unknown start method, a worker count below 1 or a negative grace.
        """
        if start_method not in _START_METHODS:
            raise ValueError(
                f"start_method {start_method!r} is not allowed; use one of {_START_METHODS} "
                "(fork is unsafe once delta-rs is loaded)"
            )
        if max_workers is not None and max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers or os.cpu_count() or 1
        self.cancel_grace_seconds = cancel_grace(cancel_grace_seconds, LOCAL_CANCEL_GRACE)
        self._context = pool_context(start_method)  # spawn's reaps with wait4: peaks kept
        self._pool: ProcessPoolExecutor | None = None
        self._spawned = 0
        """Workers the current pool has started (it never stops one while it lives)."""
        self._lock = threading.Lock()
        self._peak_rss_kb: dict[int, int] = {}
        self._workers: dict[ProcessPoolExecutor, dict[int, BaseProcess]] = {}
        """Per pool, its workers by pid: a broken pool forgets its own, and only its own deaths
        may be weighed when it breaks (a pool per break: few entries)."""
        self._tasks: dict[LinkedFuture, UnitTask] = {}
        """Units not yet settled. A broken or terminated pool may never settle them itself
        (CPython's manager thread can die on a cancelled work item)."""
        self._markers: Path | None = None
        self._terminating = False
        self._stopping: list[BaseProcess] = []
        """Workers a ``terminate`` is stopping: a hard one kills them though another waits."""
        self._warm = warm
        self._import_main = import_main

    def submit(self, fn: Callable[[Any], Any], payload: Any) -> Future[Any]:
        """Run ``fn(payload)`` in a worker (``fn`` must be importable by module and name)."""
        outer = LinkedFuture()
        marker = self._marker_dir() / uuid.uuid4().hex
        task = UnitTask(fn=fn, payload=payload, outer=outer, marker=marker)
        with self._lock:
            self._tasks[outer] = task
        self._dispatch(task)
        return outer

    def submit_wave(
        self, fn: Callable[[Any], Any], payloads: Sequence[Any], request: WaveRequest
    ) -> list[Future[Any]]:
        """Submit every payload to the pool (resources are the machine's; nothing to ask)."""
        del request
        return [self.submit(fn, payload) for payload in payloads]

    def _dispatch(self, task: UnitTask) -> None:
        pool = self._current_pool()
        if pool is None:  # terminated by a cancel: a unit sent after it must not start a pool
            self._forget(task)
            settle_once(task.outer, error=terminated_error())
            return
        try:
            with signals_blocked(), main_hidden(not self._import_main):  # workers start here
                inner = pool.submit(run_tracked, task.fn, task.payload, str(task.marker))
        except BrokenProcessPool:  # a worker died a moment ago: a fresh pool takes it
            self._drop_pool(pool)
            self._dispatch(task)
            return
        with self._lock:  # keep handles on the workers: a broken pool forgets its own
            task.pool, task.inner = pool, inner
            self._remember_workers(pool)
        task.outer.link(inner)
        inner.add_done_callback(lambda done: self._settle(task, done))

    def start_early(self, workers: int = 1) -> None:
        """Start up to ``workers`` workers now, before any unit is sent (the rest start with it).

        A step about to execute calls this (``start_workers_early``) so that a worker's
        start-up passes while the orchestrator records the step and plans its units. One is
        enough: the first step is often one unit, and on a small machine more workers starting
        beside the orchestrator would only share its cores.
        """
        with self._lock:
            if not self._terminating:
                self._spawn_workers(min(workers, self.max_workers))

    def _current_pool(self) -> ProcessPoolExecutor | None:
        """The pool with every worker started; None once terminated (nothing starts again)."""
        with self._lock:
            if self._terminating:
                return None
            if self._pool is None or self._spawned < self.max_workers:
                self._spawn_workers(self.max_workers)
            return self._pool

    def _spawn_workers(self, count: int) -> None:
        """Make the pool if needed and start workers until it has ``count`` (lock held)."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.max_workers,
                mp_context=self._context,
                initializer=init_worker,
                initargs=(os.getpid(), self._warm),
            )
            self._spawned = 0
        pool = self._pool
        # The pool spawns a worker per submit while none is idle: one trivial task per missing
        # worker starts it now (it runs the task once its initializer is done). A worker that
        # is idle takes the task instead, so ask until the pool counts enough workers.
        with signals_blocked(), main_hidden(not self._import_main):  # workers start here
            for _ in range(count + 1):
                if len(worker_processes(pool)) >= count:
                    break
                pool.submit(os.getpid)
        self._spawned = max(self._spawned, len(worker_processes(pool)))
        self._remember_workers(pool)

    def _remember_workers(self, pool: ProcessPoolExecutor) -> None:
        """Keep handles on the pool's workers (call with the lock held)."""
        for process in worker_processes(pool):
            if process.pid is not None:
                self._workers.setdefault(pool, {})[process.pid] = process

    def _drop_pool(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None  # the next submit starts a fresh pool

    def _settle(self, task: UnitTask, done: Future[Any]) -> None:
        if task.outer.done():
            self._forget(task)
            return
        if done.cancelled():
            self._forget(task)
            task.outer.cancel_now()  # dropped from the queue: the caller asked, or a shutdown
            return
        error = done.exception()
        if isinstance(error, BrokenProcessPool):
            self._settle_broken(task, done)
            return
        self._forget(task)
        settle_once(task.outer, result=done.result() if error is None else None, error=error)

    def _settle_broken(self, task: UnitTask, attempt: Future[Any]) -> None:
        """The pool broke under ``task``: fail it if its worker died first, else run it again.

        Called from the pool's thread and from the poll; only the first call for an attempt acts.
        """
        with self._lock:
            if task.inner is not attempt:
                return
            task.inner = None
            pool = task.pool
        if pool is not None:
            self._drop_pool(pool)
        codes, dead = self._exit_codes(pool)
        pid = marker_pid(task.marker)
        guilty = pid is not None and pid in guilty_pids(codes)
        if self._terminating:
            self._forget(task)
            settle_once(task.outer, error=terminated_error())
        elif not guilty and task.resubmits < MAX_RESUBMITS:
            kill_workers(pool)  # its first attempt must not still be running beside the next
            task.resubmits += 1
            task.marker.unlink(missing_ok=True)
            self._dispatch(task)
        else:
            self._forget(task)
            peak = self._peak_rss_kb_of(pid, dead.get(pid or -1))
            settle_once(task.outer, error=crash_error(codes.get(pid or -1), peak, guilty=guilty))

    def _exit_codes(
        self, pool: ProcessPoolExecutor | None
    ) -> tuple[dict[int, int], dict[int, BaseProcess]]:
        """Each dead worker's exit code, by pid (waiting a moment for them to be reaped).

        Returned with the pool's workers by pid (a reaped one holds its peak: ``reaped_workers``).
        """
        with self._lock:
            known = dict(self._workers.get(pool, {})) if pool is not None else {}
        for process in worker_processes(pool) if pool is not None else []:
            if process.pid is not None:
                known[process.pid] = process
        return dead_exit_codes(known), known

    def _peak_rss_kb_of(self, pid: int | None, process: BaseProcess | None) -> int | None:
        """A dead worker's peak resident size in KiB, or None if not known.

        The kernel's count as it was reaped (``reaped_workers``: right though it died by
        SIGKILL, when ``/proc`` has nothing left of it), or the last sample of its ``VmHWM``
        while it ran if that is larger (the OOM killer's reaper may free a victim's pages
        before its exit counts them) or the only one known (a forkserver worker).
        """
        sampled = self._peak_rss_kb.get(pid) if pid is not None else None
        reaped = reaped_peak_rss_kb(process)
        known = [peak for peak in (sampled, reaped) if peak]
        return max(known) if known else None

    def _forget(self, task: UnitTask) -> None:
        with self._lock:
            self._tasks.pop(task.outer, None)

    def sample_memory(self) -> None:
        """Record each live worker's peak RSS (from /proc), for crash reports; cheap, poll it.

        Also settles the units of a pool that broke without settling them.
        """
        with self._lock:
            pool = self._pool
            stranded = [
                (t, t.inner)
                for t in self._tasks.values()
                if t.pool is not None and t.inner is not None and is_broken(t.pool)
            ]
        for process in worker_processes(pool) if pool else []:
            peak = peak_rss_kb(process.pid)
            if peak is not None and process.pid is not None:
                self._peak_rss_kb[process.pid] = max(peak, self._peak_rss_kb.get(process.pid, 0))
        for task, attempt in stranded:
            if not task.outer.done():
                self._settle_broken(task, attempt)

    def cancel(self, level: CancelLevel) -> None:
        """Level 2: SIGTERM, SIGKILL after a grace period; level 3: SIGKILL now; 1: nothing."""
        if level is CancelLevel.FORCE:
            self.terminate(grace_seconds=self.cancel_grace_seconds)
        elif level is CancelLevel.HARD:
            self.terminate(grace_seconds=0)

    def shutdown(self, *, cancel_pending: bool = False) -> None:
        """Let running units finish (drop queued ones when ``cancel_pending``) and stop."""
        with self._lock:
            pool, self._pool = self._pool, None
            idle = not self._tasks
        if pool is not None:
            if idle:  # every unit is settled: a worker still warming up need not finish
                kill_workers(pool)
            pool.shutdown(wait=True, cancel_futures=cancel_pending)
        self._remove_markers()

    def terminate(self, *, grace_seconds: float = 2.0) -> None:
        """SIGTERM every worker, SIGKILL those still alive after ``grace_seconds``, drop the pool.

        With no grace, workers get SIGKILL at once, those an earlier call is still giving their
        grace included (a hard cancel during a force cancel's wait). Every unit not finished
        fails with :class:`WorkerCrashedError` saying it was terminated.
        """
        with self._lock:
            pool, self._pool = self._pool, None
            self._terminating = True
            if pool is not None:
                self._stopping.extend(worker_processes(pool))
            processes = list(self._stopping)
        for process in processes:
            if process.is_alive():
                process.terminate() if grace_seconds > 0 else process.kill()
        for process in processes:
            process.join(timeout=grace_seconds or 2)
            if process.is_alive():
                process.kill()
                process.join(timeout=2)
        with self._lock:
            self._stopping = [p for p in self._stopping if p.is_alive()]
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            stranded = list(self._tasks.values())
            self._tasks.clear()
        for task in stranded:
            settle_once(task.outer, error=terminated_error())
        self._remove_markers()

    def _marker_dir(self) -> Path:
        with self._lock:
            if self._markers is None:
                self._markers = owned_temp_dir("local")  # (a killed run's: swept here)
            return self._markers

    def _remove_markers(self) -> None:
        with self._lock:
            markers, self._markers = self._markers, None
        if markers is not None:
            shutil.rmtree(markers, ignore_errors=True)
