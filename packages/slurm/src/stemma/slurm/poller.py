"""One thread per backend that settles every element's future: one sacct call per poll.

Each tick looks for running elements' result files (a stat each, no scheduler call); every
``interval`` it asks sacct about all of the run's unfinished arrays at once, marks started
elements running (so their futures can no longer be cancelled), and fails those that ended
without a result. The interval doubles while nothing changes, up to a ceiling, and drops back
when something does. Cancelled futures' elements are dropped with one batched scancel.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from stemma.core.backends.base import WorkerCrashedError
from stemma.slurm import commands
from stemma.slurm.element import ElementFiles, crash_error, read_outcome, worker_log_text
from stemma.slurm.errors import ClusterUnavailableError
from stemma.slurm.job_states import ElementState, Phase, array_id, parse_sacct, state_of

_TICK_SECONDS = 0.2
_SQUEUE_MAX_AGE_SECONDS = 0.5
"""How old squeue's answer may be when a future's cancel asks whether its element started."""
_STATUS_GIVE_UP_SECONDS = 300.0
"""How long sacct may keep failing before the run's futures fail with its error."""


class ElementFuture(Future[Any]):
    """An element's future: cancelling it before it starts drops the element from its array."""

    def __init__(self, files: ElementFiles, poller: RunPoller) -> None:
        super().__init__()
        self.files = files
        self._poller = poller

    def worker_log(self, max_lines: int = 200) -> str:
        """The last lines of the element's stdout and stderr, for ``executions.worker_log``.

        Empty before the job wrote any.
        """
        return worker_log_text(self.files, max_lines)

    def cancel(self) -> bool:
        """Drop the element if it has not started; False once it runs or is settled.

        sacct lags the controller by seconds, so whether it started is asked of squeue first
        (one call for a whole loop of cancels); an element that starts between that answer
        and the drop is killed, as its future says it never ran.
        """
        self._poller.refresh_started(max_age=_SQUEUE_MAX_AGE_SECONDS)
        if self.files.result.exists():
            return False  # finished before sacct said so: the poller settles it
        if super().cancel():  # only while not started (see ``set_running_or_notify_cancel``)
            self._poller.drop(self.files.job_id)
            return True
        return False


@dataclass
class _Tracked:
    future: ElementFuture
    ended_at: float | None = None
    """When sacct first said it ended without a result file in sight."""


@dataclass
class PollSettings:
    """How often to ask the scheduler, and how long to trust a missing result file."""

    min_interval: float = 0.5
    max_interval: float = 10.0
    result_grace_seconds: float = 2.0
    """After sacct says an element ended, how long its result file may take to appear."""


@dataclass
class RunPoller:
    """Settles the futures of every tracked element; see the module docstring."""

    settings: PollSettings = field(default_factory=PollSettings)
    cancel_reason: str | None = None
    """Set when the run is being cancelled: why its killed elements have no result."""
    status_queries: int = 0
    """sacct calls made so far (one per poll, whatever the number of jobs)."""
    last_states: dict[str, str] = field(default_factory=dict[str, str])
    """Each element's last known scheduler state (``PENDING`` until sacct lists it)."""
    _tracked: dict[str, _Tracked] = field(default_factory=dict[str, _Tracked])
    _to_drop: set[str] = field(default_factory=set[str])
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _wake: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _squeue_lock: threading.Lock = field(default_factory=threading.Lock)
    _squeue_at: float = -1e9

    def track(self, futures: Iterable[ElementFuture]) -> None:
        """Watch these elements until their futures are settled."""
        with self._lock:
            for future in futures:
                self._tracked[future.files.job_id] = _Tracked(future)
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(target=self._run, name="stemma-slurm-poll")
                self._thread.daemon = True
                self._thread.start()
        self._wake.set()

    def drop(self, job_id: str) -> None:
        """Cancel a not-yet-started element (batched into the next scancel)."""
        with self._lock:
            self._to_drop.add(job_id)
        self._wake.set()

    def unsettled(self) -> list[ElementFuture]:
        """The futures still waiting for their element."""
        with self._lock:
            return [tracked.future for tracked in self._tracked.values()]

    def arrays(self) -> set[str]:
        """The array job ids that still have an unsettled element."""
        with self._lock:
            return {array_id(job_id) for job_id in self._tracked}

    def refresh_started(self, *, max_age: float = 0.0) -> None:
        """Ask squeue (current, unlike sacct) which elements run now, and mark their futures.

        Called before cancels drop the elements that have not started, so that an element
        that started a moment ago is killed and reported, not silently dropped. Skipped when
        squeue answered less than ``max_age`` seconds ago.
        """
        with self._squeue_lock:
            if time.monotonic() - self._squeue_at < max_age:
                return
            try:
                states = parse_sacct(commands.squeue_lines(self.arrays()))
            except ClusterUnavailableError:
                states = {}  # a cancel goes on: what started is killed by the array's scancel
            with self._lock:
                items = list(self._tracked.items())
            for job_id, item in items:
                state = states.get(job_id)
                started = state is not None and state.phase is not Phase.WAITING
                if started and not item.future.running() and not item.future.done():
                    item.future.set_running_or_notify_cancel()
            self._squeue_at = time.monotonic()

    def settle_all(self, error: Callable[[ElementFiles], BaseException]) -> None:
        """Fail every unsettled future at once (after a terminate)."""
        with self._lock:
            tracked, self._tracked = list(self._tracked.values()), {}
        for item in tracked:
            if not item.future.done():
                item.future.set_exception(error(item.future.files))

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread (it also stops by itself when nothing is left to watch)."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        interval = self.settings.min_interval
        next_query = time.monotonic()
        failing_since: float | None = None
        while not self._stop.is_set():
            self._scancel_dropped()
            query_due = time.monotonic() >= next_query and self._has_work()
            changed = self._collect_results(everyone=query_due)
            if query_due:
                try:
                    changed |= self._query()
                    failing_since = None
                except ClusterUnavailableError as error:
                    failing_since = failing_since or time.monotonic()
                    if time.monotonic() - failing_since > _STATUS_GIVE_UP_SECONDS:
                        self.settle_all(lambda _files, e=error: e)
                interval = (
                    self.settings.min_interval
                    if changed
                    else min(interval * 2, self.settings.max_interval)
                )
                next_query = time.monotonic() + interval
            if not self._has_work():
                with self._lock:  # nothing left: the next track() starts a fresh thread
                    if not self._tracked and not self._to_drop:
                        self._thread = None
                        return
            self._wake.wait(_TICK_SECONDS)
            self._wake.clear()

    def _has_work(self) -> bool:
        with self._lock:
            return bool(self._tracked or self._to_drop)

    def _scancel_dropped(self) -> None:
        with self._lock:
            dropped, self._to_drop = self._to_drop, set()
            for job_id in dropped:
                self._tracked.pop(job_id, None)
                self.last_states[job_id] = "CANCELLED"
        if dropped:  # not only pending ones: one that started since is killed (see cancel)
            commands.scancel(dropped)

    def _collect_results(self, *, everyone: bool) -> bool:
        """Settle the elements whose result file is there.

        On every tick only those known to run are looked at; at query time all of them (an
        element can finish before sacct says it started).
        """
        with self._lock:
            items = list(self._tracked.items())
        settled = False
        for job_id, item in items:
            future = item.future
            if future.cancelled():
                self._forget(job_id)
            elif (everyone or future.running()) and future.files.result.exists():
                value, error = read_outcome(future.files)
                self._settle(job_id, value, error)
                settled = True
        return settled

    def _query(self) -> bool:
        arrays = self.arrays()
        if not arrays:  # the last elements were settled by their result files just now
            return False
        self.status_queries += 1
        states = parse_sacct(commands.sacct_lines(arrays))
        changed = False
        now = time.monotonic()
        with self._lock:
            items = list(self._tracked.items())
        _confirm_inferred_ends([job_id for job_id, _ in items], states)
        for job_id, item in items:
            state = state_of(job_id, states)
            if state is not None:
                self.last_states[job_id] = state.state
            if state is None or state.phase is Phase.WAITING:
                continue
            future = item.future
            if not future.running() and not future.done():
                changed = True
                if not future.set_running_or_notify_cancel():  # cancelled just now
                    self._forget(job_id)
                    continue
            if state.phase is Phase.ENDED and not future.files.result.exists():
                item.ended_at = item.ended_at or now
                if now - item.ended_at >= self.settings.result_grace_seconds:
                    error = crash_error(
                        future.files,
                        state=state.state,
                        exit_code=state.exit_code,
                        reason=self.cancel_reason,
                    )
                    self._settle(job_id, None, error)
                    changed = True
        return changed

    def _settle(self, job_id: str, value: Any, error: BaseException | None) -> None:
        if not isinstance(error, WorkerCrashedError):  # it left a result: its job completes
            self.last_states[job_id] = "COMPLETED"
        item = self._forget(job_id)
        if item is None or item.future.done():
            return
        future = item.future
        if not future.running() and not future.set_running_or_notify_cancel():
            return  # cancelled a moment ago: nobody waits for it
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)

    def _forget(self, job_id: str) -> _Tracked | None:
        with self._lock:
            return self._tracked.pop(job_id, None)


def _confirm_inferred_ends(job_ids: list[str], states: dict[str, ElementState]) -> None:
    """Check with squeue the elements sacct lists only through an ended array or range line.

    After part of an array is cancelled, sacct shows the cancelled remainder as one line under
    the array's id or its original range (``12_[0-3%2]``), while an element that just started
    may not have a line of its own yet (sacct lags): it must not be taken for cancelled.
    squeue, which is current, says which of them still wait or run; the others did end as
    their array's line says.
    """
    suspects: list[str] = []
    for job_id in job_ids:
        state = states.get(job_id) or states.get(array_id(job_id))
        if state is not None and state.phase is Phase.ENDED and state.job_id != job_id:
            suspects.append(job_id)  # from the array's line
        elif state is not None and state.phase is Phase.ENDED and state.inferred:
            suspects.append(job_id)  # from a range line
    if not suspects:
        return
    live = parse_sacct(commands.squeue_lines({array_id(job_id) for job_id in suspects}))
    for job_id in suspects:
        if job_id in live:
            states[job_id] = live[job_id]
