"""The local backend: a pool of spawned worker processes that ignore Ctrl-C.

Spawn (or forkserver), never fork: the orchestrator has delta-rs loaded, and a forked child of a
process with Rust threads can deadlock. Workers ignore SIGINT so that Ctrl-C reaches only the
orchestrator, which decides how hard to stop them. A worker that dies (OOM killer, segfault,
``kill -9``) breaks the pool; every unit it took down fails with :class:`WorkerCrashedError`
naming the exit codes and the workers' peak memory, and the next submit starts a fresh pool.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, InvalidStateError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from stemma.core.backends.base import WaveRequest, WorkerCrashedError
from stemma.core.backends.worker_process import init_worker, signals_blocked
from stemma.core.cancel_levels import CancelLevel

_START_METHODS = ("spawn", "forkserver")


class LocalBackend:
    """Runs units on up to ``max_workers`` local processes."""

    name = "local"
    queues_whole_waves = False

    def __init__(self, max_workers: int | None = None, *, start_method: str = "spawn") -> None:
        """Prepare the pool; processes start on the first submit.

        Raises:
            ValueError: an unknown start method or a worker count below 1.
        """
        if start_method not in _START_METHODS:
            raise ValueError(
                f"start_method {start_method!r} is not allowed; use one of {_START_METHODS} "
                "(fork is unsafe once delta-rs is loaded)"
            )
        if max_workers is not None and max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers or os.cpu_count() or 1
        self._context = multiprocessing.get_context(start_method)
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._peak_rss_kb: dict[int, int] = {}
        self._workers: dict[int, BaseProcess] = {}
        self._outstanding: dict[Future[Any], ProcessPoolExecutor] = {}
        """Callers' futures not yet settled, by pool: a broken or terminated pool may never
        settle them itself (CPython's manager thread can die on a cancelled work item)."""

    def submit(self, fn: Callable[[Any], Any], payload: Any) -> Future[Any]:
        """Run ``fn(payload)`` in a worker (``fn`` must be importable by module and name)."""
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    self.max_workers,
                    mp_context=self._context,
                    initializer=init_worker,
                    initargs=(os.getpid(),),
                )
            pool = self._pool
        try:
            with signals_blocked():  # workers (and the pool's thread) start here
                inner = pool.submit(fn, payload)
        except BrokenProcessPool:  # a worker died a moment ago: start a fresh pool once
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            return self.submit(fn, payload)
        with self._lock:  # keep handles on the workers: a broken pool forgets its own
            for process in self._processes(pool):
                if process.pid is not None:
                    self._workers[process.pid] = process
        outer: Future[Any] = _LinkedFuture(inner)
        with self._lock:
            self._outstanding[outer] = pool
        inner.add_done_callback(lambda done: self._settle(done, outer, pool))
        return outer

    def _settle(self, done: Future[Any], outer: Future[Any], pool: ProcessPoolExecutor) -> None:
        with self._lock:
            self._outstanding.pop(outer, None)
        if done.cancelled() or outer.done():
            outer.cancel()  # cancelled before it started: the caller already knows
            return
        error = done.exception()
        if error is None:
            _settle_once(outer, result=done.result())
            return
        if isinstance(error, BrokenProcessPool):
            error = self._crash_report(pool)
        _settle_once(outer, error=error)

    def _fail_outstanding(self, pool: ProcessPoolExecutor, error: BaseException) -> None:
        """Settle every caller's future of ``pool`` that its manager thread left hanging."""
        with self._lock:
            stranded = [f for f, p in self._outstanding.items() if p is pool]
            for future in stranded:
                del self._outstanding[future]
        for future in stranded:
            _settle_once(future, error=error)

    def _crash_report(self, pool: ProcessPoolExecutor) -> WorkerCrashedError:
        with self._lock:
            processes = list(
                {**self._workers, **{p.pid: p for p in self._processes(pool) if p.pid}}.values()
            )
        for process in processes:
            process.join(timeout=1)  # a dead worker's exit code is known once it is reaped
        codes = sorted({p.exitcode for p in processes if p.exitcode is not None and p.exitcode})
        with self._lock:
            if self._pool is pool:
                self._pool = None  # the next submit starts a fresh pool
            self._workers = {pid: p for pid, p in self._workers.items() if p.exitcode is None}
            peak = max(self._peak_rss_kb.values(), default=None)
        signals = ", ".join(_describe_exit(code) for code in codes) or "unknown cause"
        memory = f"; peak worker memory {peak / 1024:.0f} MiB" if peak else ""
        return WorkerCrashedError(
            f"a worker process died while running this unit ({signals}){memory}. If it was "
            "killed for memory, give the operation more memory or fewer artifacts per unit",
            exit_codes=codes,
            peak_rss_mb=None if peak is None else peak / 1024,
        )

    def sample_memory(self) -> None:
        """Record each live worker's peak RSS (from /proc), for crash reports; cheap, poll it.

        Also settles the futures of a pool that broke without settling them.
        """
        with self._lock:
            pool = self._pool
            broken = {p for p in self._outstanding.values() if getattr(p, "_broken", False)}
        for process in self._processes(pool) if pool else []:
            peak = _peak_rss_kb(process.pid)
            if peak is not None and process.pid is not None:
                self._peak_rss_kb[process.pid] = max(peak, self._peak_rss_kb.get(process.pid, 0))
        for dead in broken:
            self._fail_outstanding(dead, self._crash_report(dead))

    def submit_wave(
        self, fn: Callable[[Any], Any], payloads: Sequence[Any], request: WaveRequest
    ) -> list[Future[Any]]:
        """Submit every payload to the pool (resources are the machine's; nothing to ask)."""
        del request
        return [self.submit(fn, payload) for payload in payloads]

    def cancel(self, level: CancelLevel) -> None:
        """Level 2: SIGTERM, SIGKILL after a grace period; level 3: SIGKILL now; 1: nothing."""
        if level is CancelLevel.FORCE:
            self.terminate()
        elif level is CancelLevel.HARD:
            self.terminate(grace_seconds=0)

    def shutdown(self, *, cancel_pending: bool = False) -> None:
        """Let running units finish (drop queued ones when ``cancel_pending``) and stop."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=cancel_pending)

    def terminate(self, *, grace_seconds: float = 2.0) -> None:
        """SIGTERM every worker, SIGKILL those still alive after ``grace_seconds``, drop the pool.

        With no grace, workers get SIGKILL at once.
        """
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = self._processes(pool)
        for process in processes:
            if process.is_alive():
                process.terminate() if grace_seconds > 0 else process.kill()
        for process in processes:
            process.join(timeout=grace_seconds or 2)
            if process.is_alive():
                process.kill()
                process.join(timeout=2)
        pool.shutdown(wait=False, cancel_futures=True)
        self._fail_outstanding(
            pool,
            WorkerCrashedError(
                "the worker was terminated by a cancellation", exit_codes=[], peak_rss_mb=None
            ),
        )

    @staticmethod
    def _processes(pool: ProcessPoolExecutor) -> list[BaseProcess]:
        # The executor keeps its workers in a private dict; it is the only handle on them.
        found: dict[int, BaseProcess] | None = getattr(pool, "_processes", None)
        return list((found or {}).values())


class _LinkedFuture(Future[Any]):
    """The caller's future of a unit: cancelling it cancels the pool's, or fails if running.

    A plain ``Future`` is never marked running, so ``cancel()`` would "succeed" on a unit a
    worker is executing, and its result would be lost.
    """

    def __init__(self, inner: Future[Any]) -> None:
        super().__init__()
        self._inner = inner

    def cancel(self) -> bool:
        return self._inner.cancel() and super().cancel()


def _settle_once(
    future: Future[Any], *, result: Any = None, error: BaseException | None = None
) -> None:
    """Set a caller's future unless something settled it first (a race we lose gracefully)."""
    with contextlib.suppress(InvalidStateError):
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


def _describe_exit(code: int | None) -> str:
    if code is None or code >= 0:
        return f"exit code {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def _peak_rss_kb(pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None
