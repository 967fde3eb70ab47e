"""Sending a step's units to the backend, in packs, and taking their outcomes as they come back."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from typing import Any

from stemma.core.backends.base import Backend, WaveRequest
from stemma.core.cancel_levels import CancelLevel
from stemma.core.engine.commit.scheduler_logs import keep_worker_log, worker_log_of
from stemma.core.engine.commit.staged_outcomes import staged_outcomes
from stemma.core.engine.dispatch.adoption import adopt_in_flight
from stemma.core.engine.dispatch.pack_sizing import TARGET_PACK_SECONDS, PackQueue, PackSizer
from stemma.core.engine.planned_step import FailurePolicy, PlannedStep
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.worker.fail_fast_marks import failed_fast, mark_failed_fast
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.engine.worker.worker_entry import UnitOutcome, run_units
from stemma.core.engine.worker_slots import WorkerSlots
from stemma.core.run_ids import job_name, run_tag

_SAMPLE_SECONDS = 0.5
"""How often the backend samples its workers' memory while a step waits for units."""
_OVERDUE = 2
"""A sized pack out for this many times its target has slower units than assumed."""


def execute_units(
    ctx: RunContext,
    step: PlannedStep,
    units: list[ExecutionUnit],
    sizer: PackSizer,
    backend: Backend | None = None,
) -> list[UnitOutcome]:
    """Run the units: at most ``max_workers`` packs at once, and GPU operations one at a time.

    Packs are cut and submitted as slots free up (their size from ``sizer``, which learns from
    each pack that comes back), so a stop (cancel, or ``fail_fast`` after a failure) drops
    everything not yet dispatched. While waiting, the backend samples its workers' memory so a
    worker the OOM killer takes is reported with its peak. ``backend``: one of the step's own
    (a curator's subprocess, ``curator_workers``) instead of the run's.
    """
    op = step.operation
    backend = backend or ctx.backend
    limit = 1 if op.resources.gpus > 0 else (op.execution.max_workers or len(units) or 1)
    if not backend.queues_whole_waves:  # no more in the pool than it has workers: a stop
        limit = min(limit, int(getattr(backend, "max_workers", limit)))  # drops the rest
    request = wave_request(ctx, step, limit)
    units, adopted = adopt_in_flight(backend, step, units, request)
    queue = PackQueue[ExecutionUnit](units, sizer)
    pending = {f: SentPack(pack, time.monotonic(), adopted=True) for f, pack in adopted}
    if adopted:
        ctx.monitor.units_sent(step.number, sum(len(pack) for _, pack in adopted))
    outcomes: list[UnitOutcome] = []
    sample = getattr(backend, "sample_memory", None)
    job_states: Callable[[int], Mapping[str, int]] | None = getattr(backend, "job_states", None)
    # (the run's worker slots are for the run's own workers; a step's own backend has its own)
    slots = None if backend.queues_whole_waves or backend is not ctx.backend else ctx.worker_slots
    while queue or pending:
        if _stopping(ctx, step, units, outcomes):
            pending = _drop_unstarted(ctx, step, queue, pending, slots)
        elif (
            not _send(ctx, backend, queue, pending, (slots, limit, request))
            and queue
            and not pending
        ):
            continue  # every worker is busy with other steps: wait for one
        if not pending:
            break
        done, _ = wait(list(pending), timeout=_SAMPLE_SECONDS, return_when=FIRST_COMPLETED)
        if callable(sample):
            sample()
        if job_states is not None:  # a scheduler's element states, from its own last poll
            ctx.monitor.step_jobs(step.number, dict(job_states(step.number)))
        shrink_for_late(sizer, pending.values())
        for future in done:
            sent = pending.pop(future)
            if slots is not None:
                slots.give()
            # (a worker that died after staging its pack: settled from staging, never run twice)
            lost = _lost(ctx, future)
            staged = staged_outcomes(ctx.store, sent.pack, adopted=sent.adopted) if lost else {}
            if not staged and _sent_again(ctx, (backend, sizer, queue), sent, future):
                continue
            back = pack_outcomes(ctx, sent.pack, future, staged)
            outcomes.extend(back)
            ctx.monitor.units_back(
                step.number,
                succeeded=sum(o.success for o in back),
                failed=sum(not o.success and not o.cancelled for o in back),
                cancelled=sum(o.cancelled for o in back),
            )
    return outcomes


def _send(
    ctx: RunContext,
    backend: Backend,
    queue: PackQueue[ExecutionUnit],
    pending: dict[Future[Any], SentPack],
    how: tuple[WorkerSlots | None, int, WaveRequest],
) -> bool:
    """Hand the backend as many packs as it has free workers for (all, for a scheduler).

    Returns whether anything was sent; a step with nothing in flight waits here a moment for
    a worker another step holds.
    """
    slots, limit, request = how
    room = None if slots is None else slots.take(limit - len(pending), wait=not pending)
    wave = queue.take(room) if room is None or room else []
    if slots is not None and room:
        slots.give(room - len(wave))  # fewer packs were left than slots taken
    if not wave:
        return False
    futures = submit_packs(backend, wave, request)
    sent = time.monotonic()
    pending.update((f, SentPack(p, sent)) for f, p in zip(futures, wave, strict=True))
    fresh = sum(len(pack) for pack in wave) - queue.taken_again  # counted once
    ctx.monitor.units_sent(request.step_number, fresh)
    return True


def _drop_unstarted(
    ctx: RunContext,
    step: PlannedStep,
    queue: PackQueue[ExecutionUnit],
    pending: dict[Future[Any], SentPack],
    slots: WorkerSlots | None,
) -> dict[Future[Any], SentPack]:
    """A stop: drop what was never sent and what the backend has not started; keep the rest."""
    dropped = queue.clear()  # units sent once already count as sent: close them
    if dropped:
        ctx.monitor.units_back(step.number, succeeded=0, failed=0, cancelled=dropped)
    kept = {f: p for f, p in pending.items() if not f.cancel()}
    if slots is not None:
        slots.give(len(pending) - len(kept))
    return kept


@dataclass
class SentPack:
    """A pack handed to the backend, and when."""

    pack: list[ExecutionUnit]
    at: float
    """When it was submitted (``time.monotonic``)."""
    late: bool = False
    """It was found out past its target once (and shrank the packs sent after it)."""
    adopted: bool = False
    """A dead run's element this run waits for (``adoption``), not one it sent."""


def shrink_for_late(sizer: PackSizer, pending: Iterable[SentPack]) -> None:
    """A pack of several units out well past its target holds slower units than assumed.

    Packs sent after it are made smaller, once per late pack: a pack's own units cannot be
    split, and a long straggler must not pin every later pack at one unit while it runs.
    """
    now = time.monotonic()
    for sent in pending:
        if not sent.late and len(sent.pack) > 1 and now - sent.at > _OVERDUE * TARGET_PACK_SECONDS:
            sizer.overdue(len(sent.pack), now - sent.at)
            sent.late = True


def _sent_again(
    ctx: RunContext,
    where: tuple[Backend, PackSizer, PackQueue[ExecutionUnit]],
    sent: SentPack,
    future: Future[Any],
) -> bool:
    """Put a pack whose worker or job died back in the queue, if it is to be sent again.

    An adopted element's units are this run's now: sent again once. A sized pack of several
    units is cut smaller. Otherwise the pack came back (its units' outcomes, or their crash),
    and its pace is learnt.
    """
    backend, sizer, queue = where
    if sent.adopted and _lost(ctx, future):
        queue.send_again(sent.pack)
        return True
    if _died_sized(ctx, sizer, sent.pack, future):
        sizer.died(len(sent.pack))
        if backend.queues_whole_waves:  # smaller elements, not a job per unit
            queue.send_again(sent.pack)
        else:
            queue.send_alone(sent.pack)  # so that only the unit that kills a worker fails
        return True
    if not sent.adopted:  # (it started before it was adopted: no pace to learn)
        sizer.observe(len(sent.pack), time.monotonic() - sent.at)
    return False


def _lost(ctx: RunContext, future: Future[Any]) -> bool:
    """Whether a pack's worker or job died (not stopped by this run's own cancellation)."""
    if future.cancelled() or ctx.cancel_level:
        return False
    return future.exception() is not None


def _died_sized(
    ctx: RunContext, sizer: PackSizer, pack: list[ExecutionUnit], future: Future[Any]
) -> bool:
    """Whether a sized pack of several units lost its worker (not to a cancellation)."""
    return sizer.sized and len(pack) >= 2 and _lost(ctx, future)


def pack_outcomes(
    ctx: RunContext,
    pack: list[ExecutionUnit],
    future: Future[Any],
    staged: Mapping[int, UnitOutcome] | None = None,
) -> list[UnitOutcome]:
    """The outcomes of a pack whose future is done, one per unit in order (worker log kept).

    ``staged``: what a dead worker staged (``staged_outcomes``), when the caller looked
    already; None to look here if the worker died.
    """
    outcomes = _settle(ctx, pack, future, staged)
    log = None if future.cancelled() else worker_log_of(future)
    if log is not None:
        keep_worker_log(ctx.store, pack, outcomes, log)
    return outcomes


def _settle(
    ctx: RunContext,
    pack: list[ExecutionUnit],
    future: Future[Any],
    staged: Mapping[int, UnitOutcome] | None,
) -> list[UnitOutcome]:
    if future.cancelled():  # dropped from the backend's queue by a cancellation
        return [UnitOutcome.stopped(max(ctx.cancel_level, 1)) for _ in pack]
    error = future.exception()
    if error is None:
        return future.result()
    if ctx.cancel_level >= CancelLevel.FORCE:  # we terminated the worker: not its failure
        return [UnitOutcome.stopped(ctx.cancel_level) for _ in pack]
    # The worker died, maybe after staging its pack: what it staged is those units' outcome
    # (committed with the step), and only the others are recorded as crashed.
    if staged is None:
        staged = staged_outcomes(ctx.store, pack)
    return [
        staged.get(i) or UnitOutcome.crashed(unit, error, ctx.store) for i, unit in enumerate(pack)
    ]


def submit_packs(
    backend: Backend, packs: list[list[ExecutionUnit]], request: WaveRequest
) -> list[Future[Any]]:
    """Hand ``packs`` to the backend, one future per pack.

    A scheduler (or any backend that can adopt a dead run's work) also gets each pack's
    execution keys, which it records with the jobs: the unit an element computes can then be
    found by its key once the orchestrator is gone.
    """
    if backend.queues_whole_waves or hasattr(backend, "adopt"):
        keys = tuple(tuple(unit.execution_spec_id for unit in pack) for pack in packs)
        request = dataclasses.replace(request, pack_keys=keys)
    return backend.submit_wave(run_units, packs, request)


def wave_request(
    ctx: RunContext,
    step: PlannedStep,
    limit: int,
    *,
    pack_steps: tuple[tuple[int, ...], ...] = (),
) -> WaveRequest:
    """The wave of ``step``'s packs (or of packs of several function steps: ``pack_steps``)."""
    op = step.operation
    resources = op.resources
    return WaveRequest(
        job_name=job_name(ctx.run_id, step.number, op.execution.job_name or step.name),
        run_id=ctx.run_id,
        run_tag=run_tag(ctx.run_id),
        step_number=step.number,
        max_parallel=limit,
        cpus=resources.cpus,
        memory_gb=resources.memory_gb,
        gpus=resources.gpus,
        time_limit=resources.time_limit,
        extra={
            **resources.extra,
            **({"partition": resources.partition} if resources.partition else {}),
        },
        log_dir=str(ctx.store.layout.logs / "slurm" / ctx.run_id),
        pack_steps=pack_steps,
        recovered_at=ctx.recovered_at,
    )


def _stopping(
    ctx: RunContext, step: PlannedStep, units: list[ExecutionUnit], outcomes: list[UnitOutcome]
) -> bool:
    if ctx.cancelled.is_set():
        return True
    fail_fast = step.failure_policy is FailurePolicy.FAIL_FAST
    if not (fail_fast and any(not outcome.success for outcome in outcomes)):
        return False
    if units and not failed_fast(units[0]):  # a worker that died could not tell the others
        mark_failed_fast(units[0])
    return True
