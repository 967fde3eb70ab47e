"""``FunctionPacks``: the units of ready function steps, packed together across steps.

A function step is one unit, and a lazy graph has many of them ready at once (a fan-out of a
thousand leaves). Sent one pack each, every one pays a pack's whole cost: a task to a worker, a
staged bundle, a commit of its own; on SLURM, an array of its own. So function steps do not
dispatch their unit themselves: they hand it here and wait for its outcome without holding a
thread, and one dispatcher thread per run packs what is waiting, as units of one step are:

- **a process pool** gets a pack whenever a worker is free. A pack holds units of one function
  (their speed is alike, so a pack is sized from what the last ones took, as ``pack_sizing``
  does for a step: one unit first, then ``TARGET_PACK_SECONDS`` of work at most ``GROWTH``
  times larger, never more than its share of what waits). Units of GPU steps go one at a time.
- **a scheduler** (SLURM) gets one wave per set of resources, gathered while steps keep
  becoming ready (until :data:`GATHER_QUIET_SECONDS` pass without a new one, at most
  :data:`GATHER_MOST_SECONDS`): one array for a thousand ready steps, not a thousand arrays.
  One element per step; with the run's ``max_workers`` set, at most that many elements, the
  steps beyond it sharing elements (they would queue behind the throttle anyway).

A cancel drops every unit not yet sent and every pack the backend has not started, and settles
their steps as cancelled; a pack of several units whose worker died is sent again one unit per
pack, so only the unit that kills its worker fails.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from stemma.core.engine.commit.staged_outcomes import staged_outcomes
from stemma.core.engine.dispatch.adoption import adopted_packs
from stemma.core.engine.dispatch.function_waves import wave_elements
from stemma.core.engine.dispatch.pack_sizing import PackSizer
from stemma.core.engine.dispatch.unit_dispatch import (
    SentPack,
    pack_outcomes,
    shrink_for_late,
    submit_packs,
)
from stemma.core.engine.dispatch.unit_dispatch import wave_request as step_wave_request
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.references import StepResult
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.engine.worker.worker_entry import UnitOutcome

GATHER_QUIET_SECONDS = 0.2
"""A scheduler's wave goes out once no step became ready for this long…"""
GATHER_MOST_SECONDS = 2.0
"""…or this long after its first unit arrived, whichever comes first."""
IDLE_SECONDS = 0.5
"""How often the dispatcher wakes with nothing to do (to sample workers' memory)."""
BUSY_SECONDS = 0.05
"""How often it looks for a worker another step freed, while units wait for one."""
JOB_REPORT_SECONDS = 1.0
"""How often the live state learns each step's scheduler job states (the poller's cadence)."""


@dataclass(frozen=True)
class PendingStep:
    """A function step whose unit is out: ``finish`` makes its result once ``outcome`` settles.

    ``finish`` commits (it blocks on the run's group commit), so it runs on a step thread, never
    on the thread that settles the future.
    """

    outcome: Future[UnitOutcome]
    finish: Callable[[UnitOutcome], StepResult]


@dataclass(eq=False)
class _Waiting:
    step: PlannedStep
    unit: ExecutionUnit
    outcome: Future[UnitOutcome]
    alone: bool = False
    """Sent again in a pack of its own (its last pack's worker died)."""


@dataclass(eq=False)
class _Out:
    sent: SentPack
    units: list[_Waiting]
    kind: tuple[Any, ...]
    gpu: bool


class FunctionPacks:
    """Packs and dispatches the units of a run's function steps; thread-safe."""

    def __init__(self, ctx: RunContext, *, most_packs: int | None = None) -> None:
        """Dispatch for ``ctx``'s run; ``most_packs`` caps a scheduler wave's elements."""
        self._ctx = ctx
        self._most_packs = most_packs
        self._changed = threading.Condition()
        self._waiting: dict[tuple[Any, ...], deque[_Waiting]] = {}
        self._sizers: dict[tuple[Any, ...], PackSizer] = {}
        self._out: dict[Future[Any], _Out] = {}
        self._returned: list[Future[Any]] = []
        self._first_at = 0.0
        self._last_at = 0.0
        self._gpu_out = 0
        self._jobs_reported_at = 0.0
        self._closed = False
        self._thread: threading.Thread | None = None
        self._broken: UnitOutcome | None = None
        """The outcome every unit gets once the dispatcher failed (an orchestration fault)."""

    def submit(self, step: PlannedStep, unit: ExecutionUnit) -> Future[UnitOutcome]:
        """Queue ``unit`` of function step ``step``; its future settles with its outcome.

        The future never fails: a worker's death or a cancel is an unsuccessful outcome.
        """
        waiting = _Waiting(step, unit, Future())
        now = time.monotonic()
        with self._changed:
            if self._closed:
                raise RuntimeError(f"run {self._ctx.run_id} has ended; start another")
            if self._broken is not None:  # the dispatcher is gone: nothing would send it
                waiting.outcome.set_result(self._broken)
                return waiting.outcome
            if not any(self._waiting.values()):
                self._first_at = now
            self._last_at = now
            self._waiting.setdefault(_kind(step), deque()).append(waiting)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="stemma-function-packs", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()
        return waiting.outcome

    def close(self) -> None:
        """Stop the dispatcher once nothing waits or is out (the run has ended)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()

    # ------------------------------------------------------------------ the dispatcher

    def _loop(self) -> None:
        try:
            self._dispatch()
        except BaseException as error:  # an orchestration fault: no step may wait forever
            self._fail_all(error)
            raise

    def _fail_all(self, error: BaseException) -> None:
        message = f"the run's dispatcher failed: {type(error).__name__}: {error}"
        broken = UnitOutcome(execution_run_id="", success=False, error=message, bundle=None)
        with self._changed:
            self._broken = broken  # units submitted from now on fail at once, too
            stranded = [*itertools.chain.from_iterable(self._waiting.values())]
            stranded += [w for out in self._out.values() for w in out.units]
            self._waiting.clear()
            self._out.clear()
        for waiting in stranded:
            if not waiting.outcome.done():
                waiting.outcome.set_result(broken)

    def _dispatch(self) -> None:
        sample: Callable[[], Any] | None = getattr(self._ctx.backend, "sample_memory", None)
        while True:
            with self._changed:
                if self._closed and not self._out and not any(self._waiting.values()):
                    return
                if not self._returned:
                    self._changed.wait(self._pause())
                returned, self._returned = self._returned, []
            for future in returned:
                self._came_back(future)
            if self._ctx.cancelled.is_set():
                self._drop_unstarted()
            else:
                self._shrink_for_late()
                self._send()
            if callable(sample) and self._out:
                sample()
            if time.monotonic() - self._jobs_reported_at >= JOB_REPORT_SECONDS:
                self._report_jobs()
                self._jobs_reported_at = time.monotonic()

    def _pause(self) -> float:
        if not any(self._waiting.values()):
            return IDLE_SECONDS
        if self._ctx.backend.queues_whole_waves:
            now = time.monotonic()
            due = min(self._last_at + GATHER_QUIET_SECONDS, self._first_at + GATHER_MOST_SECONDS)
            return max(0.0, due - now)
        return BUSY_SECONDS

    def _send(self) -> None:
        if self._ctx.backend.queues_whole_waves:
            if self._pause() == 0.0:
                self._send_waves()
            return
        while True:
            with self._changed:
                kind = self._oldest_sendable()
            if kind is None or not self._ctx.worker_slots.take(1, wait=False):
                return
            with self._changed:
                queue = self._waiting[kind]
                if queue[0].alone:
                    pack = [queue.popleft()]
                else:
                    size = self._sizer(kind).next_size(len(queue))
                    pack = [queue.popleft() for _ in range(min(size, len(queue)))]
            self._submit(kind, [pack], gpu=kind[1])

    def _oldest_sendable(self) -> tuple[Any, ...] | None:
        """The kind of unit that waited longest and may go now (GPU units one at a time)."""
        queues = sorted(
            ((q[0].step.number, k) for k, q in self._waiting.items() if q), key=lambda nk: nk[0]
        )
        return next((kind for _, kind in queues if not (kind[1] and self._gpu_out)), None)

    def _send_waves(self) -> None:
        """A scheduler: every waiting unit, one wave per set of resources."""
        with self._changed:
            by_resources: dict[tuple[Any, ...], list[_Waiting]] = {}
            for kind, queue in self._waiting.items():
                by_resources.setdefault(kind[2], []).extend(queue)
                queue.clear()
        for resources, gathered in by_resources.items():
            waiting = self._adopt(("wave", False, resources), gathered)
            alone = [[w] for w in waiting if w.alone]  # their shared element died: one each
            units = [w for w in waiting if not w.alone]
            count = wave_elements(self._ctx, [w.step for w in units], self._most_packs)
            packs = [*alone, *(units[i::count] for i in range(count))]
            if packs:
                self._submit(("wave", False, resources), packs, gpu=False)

    def _adopt(self, kind: tuple[Any, ...], units: list[_Waiting]) -> list[_Waiting]:
        """Wait for the elements a dead run left computing some of ``units``; the others."""
        if not units:
            return units
        ctx = self._ctx
        wanted = {w.unit.execution_spec_id: w for w in units if not w.step.skip_cache}
        request = step_wave_request(ctx, units[0].step, len(units))
        packs = adopted_packs(ctx.backend, wanted, request)
        at = time.monotonic()
        for future, pack in packs:
            for waiting in pack:
                ctx.monitor.units_sent(waiting.step.number, 1)
            out = _Out(SentPack([w.unit for w in pack], at, adopted=True), pack, kind, False)
            with self._changed:
                self._out[future] = out
            future.add_done_callback(self._on_done)
        taken = {id(waiting) for _, pack in packs for waiting in pack}
        return [waiting for waiting in units if id(waiting) not in taken]

    def _submit(self, kind: tuple[Any, ...], packs: list[list[_Waiting]], *, gpu: bool) -> None:
        ctx = self._ctx
        first = packs[0][0].step
        request = step_wave_request(
            ctx,
            first,
            self._most_packs or len(packs),
            pack_steps=tuple(tuple(w.step.number for w in pack) for pack in packs),
        )
        try:
            units = [[waiting.unit for waiting in pack] for pack in packs]
            futures = submit_packs(ctx.backend, units, request)
        except BaseException as error:  # the backend refused the wave: every unit fails
            for pack in packs:
                if not ctx.backend.queues_whole_waves:
                    ctx.worker_slots.give()
                for waiting in pack:
                    waiting.outcome.set_result(UnitOutcome.crashed(waiting.unit, error, ctx.store))
            return
        at = time.monotonic()
        for future, pack in zip(futures, packs, strict=True):
            self._gpu_out += gpu
            for waiting in pack:
                ctx.monitor.units_sent(waiting.step.number, 1)
            out = _Out(SentPack([w.unit for w in pack], at), pack, kind, gpu)
            with self._changed:
                self._out[future] = out
            future.add_done_callback(self._on_done)

    def _wait_again(self, kind: tuple[Any, ...], units: list[_Waiting]) -> None:
        """Queue ``units`` to be sent in the next wave."""
        now = time.monotonic()
        with self._changed:
            if not any(self._waiting.values()):
                self._first_at = now
            self._last_at = now
            self._waiting.setdefault(kind, deque()).extend(units)

    def _on_done(self, future: Future[Any]) -> None:
        with self._changed:
            self._returned.append(future)
            self._changed.notify_all()

    def _came_back(self, future: Future[Any]) -> None:
        ctx = self._ctx
        with self._changed:
            out = self._out.pop(future)
        self._gpu_out -= out.gpu
        if not ctx.backend.queues_whole_waves:
            ctx.worker_slots.give()
        sizer = self._sizers.get(out.kind)
        lost = not future.cancelled() and not ctx.cancel_level and future.exception() is not None
        # (a worker that died after staging its pack: settled from staging, never run twice)
        staged = staged_outcomes(ctx.store, out.sent.pack, adopted=out.sent.adopted) if lost else {}
        lost = lost and not staged
        if lost and out.sent.adopted:  # a dead run's element died: its units are ours, sent
            self._wait_again(out.kind, out.units)  # again in the next wave
            return
        if lost and len(out.units) > 1:  # so that only the unit that kills a worker fails
            if sizer is not None:
                sizer.died(len(out.units))
            for waiting in out.units:
                waiting.alone = True
            if ctx.backend.queues_whole_waves:  # (an element each, in the next wave)
                self._wait_again(out.kind, out.units)
                return
            with self._changed:
                for waiting in reversed(out.units):
                    self._waiting.setdefault(out.kind, deque()).appendleft(waiting)
            return
        if sizer is not None:
            sizer.observe(len(out.units), time.monotonic() - out.sent.at)
        outcomes = pack_outcomes(ctx, out.sent.pack, future, staged)
        for waiting, outcome in zip(out.units, outcomes, strict=True):
            ctx.monitor.units_back(
                waiting.step.number,
                succeeded=int(outcome.success),
                failed=int(not outcome.success and not outcome.cancelled),
                cancelled=int(outcome.cancelled),
            )
            waiting.outcome.set_result(outcome)

    def _drop_unstarted(self) -> None:
        """A cancel: settle what was never sent, and take back what has not started."""
        ctx = self._ctx
        with self._changed:
            dropped = list(itertools.chain.from_iterable(self._waiting.values()))
            self._waiting.clear()
            out = list(self._out)
        for waiting in dropped:
            ctx.monitor.units_back(waiting.step.number, succeeded=0, failed=0, cancelled=1)
            waiting.outcome.set_result(UnitOutcome.stopped(max(ctx.cancel_level, 1)))
        for future in out:
            future.cancel()  # its done callback brings it back as stopped

    def _sizer(self, kind: tuple[Any, ...]) -> PackSizer:
        if kind not in self._sizers:
            workers = int(getattr(self._ctx.backend, "max_workers", 1))
            self._sizers[kind] = PackSizer(fixed=1 if kind[1] else None, workers=workers)
        return self._sizers[kind]

    def _shrink_for_late(self) -> None:
        """Once per turn, not per pack cut: packs out well past their target shrink the next."""
        with self._changed:
            out = [(o.kind, o.sent) for o in self._out.values() if o.kind in self._sizers]
        for kind, sent in out:
            shrink_for_late(self._sizers[kind], [sent])

    def _report_jobs(self) -> None:
        job_states: Callable[[int], Mapping[str, int]] | None = getattr(
            self._ctx.backend, "job_states", None
        )
        if job_states is None:
            return
        with self._changed:
            steps = {w.step.number for out in self._out.values() for w in out.units}
        for number in steps:
            self._ctx.monitor.step_jobs(number, dict(job_states(number)))


def _kind(step: PlannedStep) -> tuple[Any, ...]:
    """What may share a pack: one function, GPU or not, the same resources."""
    op = step.operation
    fn = getattr(getattr(op, "spec", None), "step", None)
    fn = getattr(fn, "fn", None)
    resources = op.resources
    return (
        (getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)),
        resources.gpus > 0,
        (
            resources.cpus,
            resources.memory_gb,
            resources.gpus,
            resources.time_limit,
            resources.partition,
            tuple(sorted(resources.extra.items())),
        ),
    )
