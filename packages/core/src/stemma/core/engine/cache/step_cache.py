"""Step-level cache hits, and the lease that makes concurrent runs build a step once.

A step whose key was completed earlier, reading the same upstream step runs, is a hit: one
lookup, nothing dispatched (docs/concepts/execution-flow.md). A miss takes the key's lease, a
lock file under ``{root}/locks`` (or the store's own, ``step_lease``: an object in the bucket of a
root in an object store), before building; a run that waited for the lease looks again,
and finds what the other run built (docs/concepts/store.md).
"""

from __future__ import annotations

from typing import Protocol

from stemma.core.engine.planned_step import CachePolicy, PlannedStep
from stemma.core.engine.references import StepResult
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.step_events import event_factory, inputs_from, step_result
from stemma.core.execution_records import StepEvent
from stemma.core.file_lock import FileLock
from stemma.core.records import StepStatus
from stemma.core.run_ids import new_attempt_id
from stemma.core.store.read_only_root import ReadOnlyRootStore, refuse_to_run

LEASE_POLL_SECONDS = 0.5
"""How often a step waiting for another run's lease on its key checks for a cancel."""


class Lease(Protocol):
    """What a step's lease does: a lock file's ``flock``, or a store's own (a bucket's)."""

    def acquire(self, timeout: float | None = None) -> bool:
        """Wait for the lease up to ``timeout`` seconds; whether it was taken."""
        ...

    def release(self) -> None:
        """Give the lease up."""
        ...


def acquire_lease(ctx: RunContext, fingerprint: str) -> Lease | None:
    """The step's lease, waited for while the run is not cancelled (None once it is).

    Every step that must run takes it first, and no cache hit does: the one place to refuse a
    step on a root this process cannot write, before anything of it is written.

    Raises:
        ReadOnlyRootError: the run's root cannot be written (the message names the path).
    """
    if isinstance(ctx.store, ReadOnlyRootStore):
        names = [s.name for s in ctx.steps.values() if s.fingerprint == fingerprint]
        refuse_to_run(ctx.store, f"step {names[0]!r}" if names else f"step {fingerprint[:12]}")
    make = getattr(ctx.store, "step_lease", None)  # a store whose root needs its own kind
    lease: Lease = (
        make(fingerprint)
        if make is not None
        else FileLock(ctx.store.layout.locks / fingerprint[:2] / f"{fingerprint}.step.lock")
    )
    while not lease.acquire(timeout=LEASE_POLL_SECONDS):
        if ctx.cancelled.is_set():
            return None
    return lease


def step_cache_hit(
    ctx: RunContext, step: PlannedStep, fingerprint: str, *, fresh: bool = False
) -> StepEvent | None:
    """The earlier completed run of this key, if it read exactly what this one would read.

    ``fresh`` asks the store itself, not the index read at the start of the run (after waiting
    for a step's lease, the other run's result is newer than the index).

    The key holds the upstream steps' keys, not their outputs: an upstream step that ran again
    (its last run had failed units, or it is ``dev``, or skipped the cache) may offer other
    artifacts under the same key. So a hit also needs the same upstream step runs as sources;
    when they differ the step runs again, cheaply, through execution-level hits.
    """
    with ctx.commit_lock:
        if ctx.step_index is None and not fresh:
            ctx.step_index = ctx.store.completed_steps()
        hit = None if fresh or ctx.step_index is None else ctx.step_index.get(fingerprint)
    if hit is None:  # another run may have completed it since the index was read
        hit = ctx.store.latest_step(fingerprint, [StepStatus.COMPLETED])
    if hit is None:
        return None
    if ctx.cache_policy is CachePolicy.ALL_SUCCEEDED and hit.failed_count:
        return None
    if "inputs_from" not in hit.metadata:  # a function step's record under this key (an
        return None  # operation step run as a function before one engine): no outputs offered
    if hit.metadata.get("inputs_from", []) != inputs_from(ctx, step):
        return None
    return hit


def cached_result(ctx: RunContext, step: PlannedStep, hit: StepEvent, started: float) -> StepResult:
    """The result of a step-level hit: its event is written with the next commit."""
    source = str(hit.metadata.get("outputs_from", hit.step_run_id))
    step.outputs_from = source
    step_run_id = new_attempt_id()
    # The newest event of a fingerprint is its record: it keeps the pace the step was built at.
    pace = {"unit_seconds": hit.metadata["unit_seconds"]} if "unit_seconds" in hit.metadata else {}
    event = event_factory(ctx, step, step_run_id)(
        StepStatus.COMPLETED,
        total=hit.total_count,
        succeeded=hit.succeeded_count,
        failed=hit.failed_count,
        metadata={"outputs_from": source, "cache": "step", **pace},
    )
    with ctx.commit_lock:
        ctx.deferred_events.append(event)  # written with the next commit, or at finalize
    ctx.monitor.units_planned(step.number, total=hit.total_count, cached=hit.total_count)
    ctx.monitor.step_finished(step.number, StepStatus.COMPLETED, cache="step")
    return step_result(step, step_run_id, event, started, cache="step")
