"""Dispatch → execute → commit for one Pipeline step (docs/concepts/execution-flow.md).

Runs on one of the orchestrator's step threads once every step it reads from has finished:
step-level cache (one lookup), input resolution, the unit plan (pairing and batching, counted
first: ``unit_plan``), execution-level cache (one batched lookup per chunk of units), units to
the backend a window at a time, one commit of the whole step, and the final event.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from typing import Any, TypeVar

from stemma.core.backends.base import Backend, start_workers_early
from stemma.core.engine.cache.step_cache import acquire_lease, cached_result, step_cache_hit
from stemma.core.engine.cache.step_keys import step_fingerprint
from stemma.core.engine.cancel.fail_fast import halt_if_failed, marker_path
from stemma.core.engine.commit.step_finish import finish_step, skipped_by_cancel
from stemma.core.engine.commit.unit_tally import UnitTally
from stemma.core.engine.dispatch.associations import reads_associations
from stemma.core.engine.dispatch.curator_workers import curator_workers
from stemma.core.engine.dispatch.file_promotion import promote_files
from stemma.core.engine.dispatch.function_dispatch import run_function_step
from stemma.core.engine.dispatch.function_packs import PendingStep
from stemma.core.engine.dispatch.input_rows import with_input_rows
from stemma.core.engine.dispatch.pack_sizing import PackSizer
from stemma.core.engine.dispatch.unit_dispatch import execute_units
from stemma.core.engine.dispatch.unit_plan import LOOKUP_UNITS, Groups, UnitPlan, plan_units
from stemma.core.engine.dispatch.wave_sizing import wave_sizer
from stemma.core.engine.planned_step import FailurePolicy, FileInputs, PlannedStep
from stemma.core.engine.references import OutputReference, StepResult
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.step_events import (
    event_factory,
)
from stemma.core.engine.worker.creator_lifecycle import EXCEPTION
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.errors import BatchingError, PairingError
from stemma.core.operations.kinds import OperationKind
from stemma.core.records import StepStatus
from stemma.core.run_ids import new_attempt_id
from stemma.core.store.opening import store_kind

_T = TypeVar("_T")
_NO_PROVENANCE: Mapping[str, Any] = {}
"""One empty mapping every unit shares (never written to): not a new dict per unit."""
MIN_WINDOW_UNITS = 4096
"""At least this many units are made and dispatched together (fewer pauses for tiny packs)."""
WINDOW_ROUNDS = 4
"""At least this many packs per worker in a window: the pool idles only on a window's last."""


def run_step(ctx: RunContext, step: PlannedStep) -> StepResult | PendingStep:
    """Run one step to its result; raises only for orchestration faults, never for unit failures.

    A function step that must run comes back pending (see ``function_packs``).
    """
    started = time.monotonic()
    upstream = {n: ctx.steps[n].future.result() for n in step.upstream_steps()}
    step.fingerprint = step.fingerprint or _fingerprint(ctx, step)
    ctx.monitor.step_started(step.number)
    if ctx.cancelled.is_set():
        return skipped_by_cancel(ctx, step, started)
    if ctx.halted_by is not None:  # a step failed under fail_fast: no later step starts
        return skipped_by_cancel(ctx, step, started, reason="fail_fast")
    op = step.operation
    if op.kind is OperationKind.FUNCTION:  # one unit, keyed by its front door
        return run_function_step(ctx, step, upstream, started)
    if step.skip_cache or type(op).version.endswith("dev") or reads_associations(op):
        # (associated artifacts can appear under an unchanged step key: only the execution
        # keys, which hold their ids, can tell)
        return halt_if_failed(ctx, step, _execute(ctx, step, upstream, started))
    hit = step_cache_hit(ctx, step, step.fingerprint)
    if hit is not None:
        return cached_result(ctx, step, hit, started)
    # The same step asked for by several runs executes once (docs/concepts/store.md): one lease
    # per key; whoever waited for it looks again, and finds the other run's result.
    lease = acquire_lease(ctx, step.fingerprint)
    if lease is None:
        return skipped_by_cancel(ctx, step, started)
    try:
        hit = step_cache_hit(ctx, step, step.fingerprint, fresh=True)
        if hit is not None:
            return cached_result(ctx, step, hit, started)
        return halt_if_failed(ctx, step, _execute(ctx, step, upstream, started))
    finally:
        lease.release()


def _execute(
    ctx: RunContext, step: PlannedStep, upstream: Mapping[int, StepResult], started: float
) -> StepResult:
    """Dispatch, execute and commit the step (no step-level hit)."""
    step_run_id = new_attempt_id()
    step.outputs_from = step_run_id
    event = event_factory(ctx, step, step_run_id)
    # The run's provenance (git commit, user, host, command line) is the same for every unit:
    # it is recorded once, on the attempt's running event, not on each unit's execution row.
    # Opened first: a hard cancel landing between the two still closes the attempt.
    ctx.opened(step_run_id, step.number, event)
    if step.operation.kind is not OperationKind.CURATOR:  # (a curator has a process of its own)
        start_workers_early(ctx.backend)
    ctx.record([event(StepStatus.RUNNING, metadata={"provenance": dict(ctx.provenance)})])
    promote_files(ctx, step, step_run_id)
    inputs = _resolve_inputs(ctx, step, upstream)
    if inputs and all(not ids for ids in inputs.values()):
        # Nothing to read: because a step it reads from did not build (not a success), or
        # because there was nothing to do (a success).
        unbuilt = any(_did_not_build(upstream[n]) for n in step.upstream_steps())
        reason = "dependency_failed" if unbuilt else "empty_inputs"
        return finish_step(ctx, step, event, started, skip_reason=reason)
    try:
        plan = plan_units(ctx, step, inputs)
    except (PairingError, BatchingError) as err:  # the inputs cannot form units: nothing runs
        return finish_step(ctx, step, event, started, dispatch_error=str(err))
    tally = UnitTally(expected=plan.total)
    ctx.monitor.units_planned(step.number, total=plan.total, cached=0)
    # Units are made, keyed, looked up, sent and let go a chunk and a window at a time: the
    # orchestrator never holds every unit, key and outcome of a step at once.
    misses = _misses(ctx, step, plan, tally)
    marker = marker_path(ctx, step, step_run_id)
    first_error: BaseException | None = None
    with curator_workers(ctx, step) as backend:
        sizer = _pack_sizer(ctx, step, backend)
        misses, waves = wave_sizer(ctx, step, backend, misses, lambda: plan.total - tally.cached)
        while not _stopped(ctx, step, tally):
            window = _window(backend, sizer)
            if waves is not None:
                window = waves.window() or window
            try:
                planned = list(islice(misses, window))
            except Exception as err:  # a later chunk's lookup failed: keep what came back
                error = f"planning the step's units failed after {tally.returned} ran: {err}"
                return finish_step(ctx, step, event, started, tally, dispatch_error=error)
            if not planned:
                break
            make = _unit_maker(ctx, step, step_run_id, (backend.name, marker))
            units = [make(key, groups) for key, groups in planned]
            del planned
            units = with_input_rows(ctx.store, units)  # dry inputs: one read here, none per pack
            if waves is not None:  # a whole wave: its elements sized before it goes
                sizer.size = waves.per_element(len(units))
            outcomes = execute_units(ctx, step, units, sizer, backend)
            if waves is not None:
                waves.learn(outcomes)
            first_error = first_error or next(
                (o.reply[EXCEPTION] for o in outcomes if EXCEPTION in o.reply), None
            )
            tally.add(outcomes)
        remember_pack_size(ctx, step, sizer)
    result = finish_step(ctx, step, event, started, tally)
    return dataclasses.replace(result, exception=first_error) if first_error else result


def _pack_sizer(ctx: RunContext, step: PlannedStep, backend: Backend) -> PackSizer:
    """The step's packs: ``units_per_worker`` units each, or sized as they come back.

    Sized packs start at one unit, or at the size the operation's last step of this run ended
    with (``RunContext.pack_sizes``). A backend that queues whole waves learns nothing before it
    has submitted everything: its elements are sized per wave from history (``wave_sizing``). A
    curator's own subprocess runs one unit per pack, so a unit that kills it fails alone.
    """
    execution = step.operation.execution
    fixed = execution.units_per_worker
    if fixed is None and backend is not ctx.backend:
        fixed = 1
    workers = int(execution.max_workers or getattr(backend, "max_workers", 1))
    sizer = PackSizer(fixed=fixed, workers=workers, whole_waves=backend.queues_whole_waves)
    if sizer.sized and not sizer.whole_waves:
        sizer.size = ctx.pack_sizes.get(str(step.operation.name), sizer.size)
    return sizer


def remember_pack_size(ctx: RunContext, step: PlannedStep, sizer: PackSizer) -> None:
    """Keep the size a sized step's packs ended at, for the operation's next step in this run.

    A whole wave's size is set per wave from history (``wave_sizing``), a fixed one by the
    operation: neither is learned here.
    """
    if sizer.sized and not sizer.whole_waves:
        ctx.pack_sizes[str(step.operation.name)] = sizer.size


def _window(backend: Backend, sizer: PackSizer) -> int:
    """How many units are planned and held at once: a few rounds of packs for every worker.

    A backend that queues whole waves (SLURM) gets the whole step at once: one submission.
    Sized packs grow as they go, so the window is worked out again for each.
    """
    if backend.queues_whole_waves:
        return sys.maxsize
    per_round = sizer.per_pack * sizer.workers  # whole packs: the same packs as one wave
    window = per_round * max(WINDOW_ROUNDS, -(-MIN_WINDOW_UNITS // per_round))
    return window if not sizer.sized else min(window, LOOKUP_UNITS)


def _stopped(ctx: RunContext, step: PlannedStep, tally: UnitTally) -> bool:
    """Nothing more is dispatched after a cancellation, or a failure under ``fail_fast``."""
    if ctx.cancelled.is_set():
        return True
    return step.failure_policy is FailurePolicy.FAIL_FAST and tally.failed_any


def _misses(
    ctx: RunContext, step: PlannedStep, plan: UnitPlan, tally: UnitTally
) -> Iterator[tuple[str, Groups]]:
    """The units the execution cache cannot answer, with their keys; hits go into ``tally``.

    One lookup per chunk of units. A backend that queues whole waves gets the step as one chunk.
    A step stopped early never looks up its later chunks: their units count as cancelled.
    """
    size = sys.maxsize if ctx.backend.queues_whole_waves else LOOKUP_UNITS
    for chunk in plan.keyed_chunks(size):
        hits = {} if step.skip_cache else ctx.store.executions_by_key([k for k, _ in chunk])
        for key, _ in chunk:
            if key in hits:
                tally.add_cached(hits[key].outputs)
        ctx.monitor.units_planned(step.number, total=plan.total, cached=tally.cached)
        yield from ((key, groups) for key, groups in _drained(chunk) if key not in hits)


def _drained(items: list[_T]) -> Iterator[_T]:
    """Yield ``items`` in order, dropping the list's reference to each as it is yielded."""
    items.reverse()
    while items:
        yield items.pop()


def step_key(ctx: RunContext, step: PlannedStep) -> str:
    """The step's fingerprint, from its upstream steps' (what a dry run looks up, too)."""
    return _fingerprint(ctx, step)


def _fingerprint(ctx: RunContext, step: PlannedStep) -> str:
    refs: dict[str, list[tuple[str, str]]] = {}
    literals: dict[str, list[str]] = {}
    for role, given in step.inputs.items():
        if isinstance(given, OutputReference):
            upstream = ctx.steps[given.source_step].fingerprint or ""
            refs.setdefault(role, []).append((upstream, given.role))
        elif isinstance(given, FileInputs):
            literals[role] = given.content_hashes()  # raw files: keyed by content, not path
        else:
            literals[role] = list(given)
    return step_fingerprint(step.operation, refs=refs, literals=literals)


def _did_not_build(result: StepResult) -> bool:
    """Whether an upstream step failed as a whole, or was skipped with something to do.

    Its failed units alone do not count: its other units' outputs are read as usual.
    """
    status = result.metadata.get("status")
    return status == StepStatus.FAILED.value or (
        status == StepStatus.SKIPPED.value and not result.success
    )


def _resolve_inputs(
    ctx: RunContext, step: PlannedStep, upstream: Mapping[int, StepResult]
) -> dict[str, tuple[str, ...]]:
    sources = {
        n: ctx.steps[n].outputs_from or upstream[n].step_run_id for n in step.upstream_steps()
    }
    return resolve_inputs(ctx, step, sources)


def resolve_inputs(
    ctx: RunContext, step: PlannedStep, sources: Mapping[int, str]
) -> dict[str, tuple[str, ...]]:
    """A step's inputs as artifact ids, role by role, sorted and without repeats.

    Args:
        ctx: the run.
        step: the step.
        sources: for each upstream step number, the step run whose outputs it offers (a run
            answers from its own attempt; ``stemma plan`` from the cached attempt of a hit).
    """
    offered = ctx.store.step_outputs(list(sources.values())) if sources else {}
    resolved: dict[str, tuple[str, ...]] = {}
    for role, given in step.inputs.items():
        if isinstance(given, OutputReference):
            ids = offered.get(sources[given.source_step], {}).get(given.role, ())
            resolved[role] = tuple(sorted(set(ids)))
        elif isinstance(given, FileInputs):
            resolved[role] = given.ids()
        else:
            resolved[role] = tuple(sorted(set(given)))
    return resolved


def _unit_maker(
    ctx: RunContext, step: PlannedStep, step_run_id: str, where: tuple[str, str | None]
) -> Callable[[str, Groups], ExecutionUnit]:
    """What makes a window's units from their keys and groups, the rest worked out once.

    Once a window, not once a unit: asking the store's kind (which refuses a unit on a
    read-only root) went through a runtime protocol check each time (issue 34).

    Raises:
        ReadOnlyRootError: the root is read-only and the step takes no lease (``store_kind``).
    """
    backend, fail_fast_file = where  # the backend that runs it, and the fail_fast marker
    version = step.operation.version_label()
    root = str(ctx.store.layout.root)
    kind = store_kind(ctx.store)

    def make(key: str, groups: Groups) -> ExecutionUnit:
        return ExecutionUnit(
            operation=step.operation,
            step_run_id=step_run_id,
            step_spec_id=step.fingerprint or "",
            step_name=step.name,
            step_number=step.number,
            version=version,
            execution_spec_id=key,
            groups=groups,
            root=root,
            backend=backend,
            preserve_working=ctx.preserve_working,
            provenance=_NO_PROVENANCE,  # (on the step's running event: see _execute)
            store_kind=kind,
            fail_fast_file=fail_fast_file,
        )

    return make
