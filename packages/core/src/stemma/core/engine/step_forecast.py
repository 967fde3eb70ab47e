"""What one Pipeline step would do, found the way the engine finds it, doing nothing.

The same key (``step_key``), the same step-level lookup (``step_cache_hit``), the same unit
plan and execution-key lookup as a real run (``plan_units``, ``executions_by_key``): a dry run
that guessed differently from the run would be worse than none. A miss is explained as
``stemma explain`` explains one, against the step's newest completed attempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from stemma.core.engine.cache.step_cache import step_cache_hit
from stemma.core.engine.dispatch.associations import reads_associations
from stemma.core.engine.dispatch.step_dispatch import resolve_inputs, step_key
from stemma.core.engine.dispatch.unit_plan import LOOKUP_UNITS, plan_units
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.run_context import RunContext
from stemma.core.errors import BatchingError, PairingError
from stemma.core.execution_records import StepEvent
from stemma.core.graph.explain import component_changes, key_components, step_names, upstream_keys
from stemma.core.operations.kinds import OperationKind
from stemma.core.records import StepStatus

Action = Literal["hit", "run", "after"]


@dataclass(frozen=True, kw_only=True)
class StepForecast:
    """One line of a Pipeline script's dry run: a step, what it would do, and why."""

    run_name: str
    """The pipeline's name, as given to ``Pipeline.create``."""
    number: int
    """The step's number in its run."""
    name: str
    """The step's name."""
    action: Action
    """``hit`` (built already, whole step), ``run`` (units would run), ``after`` (it reads a
    step that would run first: its units are unknown until that step has run)."""
    fingerprint: str
    """The step key."""
    units: int | None
    """Its units (None: unknown until the steps it reads from have run)."""
    cached_units: int | None
    """Of those, the ones whose execution key is built already (execution-level hits)."""
    reason: str
    """Why, in one line: the hit's source, or what changed since the last completed attempt."""
    changes: tuple[str, ...] = ()
    """The changed fields of a miss (``params.seconds: 0.5 → 0.2``), one per line."""
    outputs_from: str | None = None
    """The step run whose outputs it would offer (a hit's source), else None."""
    run_id: str = ""
    """The dry run's id (never recorded): tells apart two runs of one name in one script."""


def forecast_step(
    ctx: RunContext,
    step: PlannedStep,
    run_name: str,
    earlier: Mapping[int, StepForecast],
    history: Sequence[StepEvent],
    pending: Mapping[str, int] | None = None,
) -> StepForecast:
    """What ``step`` would do; sets its fingerprint (and a hit's ``outputs_from``) on it.

    Args:
        ctx: the dry run's context (its store is only read).
        step: the step, its upstream steps already forecast.
        run_name: the pipeline's name.
        earlier: the forecasts of the run's earlier steps, by number.
        history: the store's step events (for why a miss misses).
        pending: the stand-in ids the dry run handed out for the outputs of steps that would
            run, by the step's number: a step given them literally runs after that step.
    """
    step.fingerprint = step_key(ctx, step)
    made = partial(
        StepForecast,
        run_name=run_name,
        run_id=ctx.run_id,
        number=step.number,
        name=step.name,
        fingerprint=step.fingerprint,
    )
    reads = sorted({*step.upstream_steps(), *_pending_sources(step, pending or {})})
    waiting = [earlier[n] for n in reads if earlier[n].action != "hit"]
    changes = _changes(ctx, step, history, waiting)
    if waiting:
        names = ", ".join(f"{f.number} {f.name}" for f in waiting)
        return made(
            action="after",
            units=None,
            cached_units=None,
            reason=f"runs after step {names}: its units are unknown until then",
            changes=changes[1],
        )
    always = _always_runs(step)
    hit = None if always else step_cache_hit(ctx, step, step.fingerprint)
    if hit is not None:
        step.outputs_from = str(hit.metadata.get("outputs_from", hit.step_run_id))
        when = f"{hit.timestamp:%Y-%m-%d %H:%M}"
        return made(
            action="hit",
            units=hit.total_count,
            cached_units=hit.total_count,
            reason=f"step hit: built by {hit.pipeline_run_id} ({when})",
            outputs_from=step.outputs_from,
        )
    units, cached, problem = _units(ctx, step)
    return made(
        action="run",
        units=units,
        cached_units=cached,
        reason=problem or always or changes[0],
        changes=changes[1],
    )


def _pending_sources(step: PlannedStep, pending: Mapping[str, int]) -> set[int]:
    """The steps whose stand-in ids ``step`` was given as literal artifact ids."""
    found: set[int] = set()
    for given in step.inputs.values():
        if isinstance(given, tuple):
            found.update(pending[i] for i in given if i in pending)
    return found


def _always_runs(step: PlannedStep) -> str | None:
    """Why the step skips the step-level lookup, as a real run does (None: it looks)."""
    op = step.operation
    if op.kind is OperationKind.FUNCTION:
        return "function step: its cache is looked up as it runs (not planned)"
    if step.skip_cache:
        return "skip_cache: runs every time"
    if type(op).version.endswith("dev"):
        return f"version {type(op).version}: a dev version runs every time"
    if reads_associations(op):
        return "reads associations: only its execution keys can tell what is built"
    return None


def _units(ctx: RunContext, step: PlannedStep) -> tuple[int | None, int | None, str | None]:
    """Its units and how many are execution hits, or why they cannot be counted."""
    if step.operation.kind is OperationKind.FUNCTION:
        return 1, None, None
    inputs = _inputs(ctx, step)
    if inputs and all(not ids for ids in inputs.values()):
        return 0, 0, "nothing to read: its inputs are empty"
    try:
        plan = plan_units(ctx, step, inputs)
    except (PairingError, BatchingError) as err:
        return None, None, f"its inputs cannot form units: {err}"
    cached = 0
    if not step.skip_cache:
        for chunk in plan.keyed_chunks(LOOKUP_UNITS):
            cached += len(ctx.store.executions_by_key([key for key, _ in chunk]))
    return plan.total, cached, None


def _inputs(ctx: RunContext, step: PlannedStep) -> dict[str, tuple[str, ...]]:
    """Its inputs' artifact ids: the upstream hits' outputs, files, or ids given literally."""
    sources = {n: ctx.steps[n].outputs_from or "" for n in step.upstream_steps()}
    return resolve_inputs(ctx, step, sources)


def _changes(
    ctx: RunContext,
    step: PlannedStep,
    history: Sequence[StepEvent],
    waiting: Sequence[StepForecast],
) -> tuple[str, tuple[str, ...]]:
    """Why a miss misses: one line, and the changed fields (as ``stemma explain`` says them).

    An upstream key that changed because a step it reads from would run is said as that step,
    not as two fingerprints.
    """
    done = [
        e
        for e in sorted(history, key=lambda e: e.timestamp)
        if e.step_name == step.name and e.status is StepStatus.COMPLETED
    ]
    if not done:
        return "new: no earlier completed attempt of this step", ()
    same = [e for e in done if e.step_spec_id == step.fingerprint]
    if same:
        last = same[-1]
        why = (
            "it had failed units (the all_succeeded cache policy runs it again)"
            if last.failed_count
            else "the steps it reads from ran again since"
        )
        return f"same key as in {last.pipeline_run_id}, but {why}", ()
    previous = done[-1]
    fields = component_changes(
        key_components(previous, step_names(history)), _step_components(ctx, step)
    )
    if waiting and any(line.startswith("upstream") for line in fields):
        names = ", ".join(f"{f.number} {f.name}" for f in waiting)
        fields = [line for line in fields if not line.startswith("upstream")]
        fields.append(f"upstream: step {names} would run")
    lines = tuple(fields) or ("(identical fields: a step it reads from changed)",)
    return f"changed since {previous.pipeline_run_id}: {lines[0]}", lines


def _step_components(ctx: RunContext, step: PlannedStep) -> dict[str, Any]:
    """:func:`key_components` of a step not yet recorded (what its events would say)."""
    op = step.operation
    return {
        "operation": op.label(),
        "version": op.version_label(),
        "params": dict(op.event_params()),
        "upstream": upstream_keys(
            (ctx.steps[n].fingerprint or "" for n in step.upstream_steps()),
            {ctx.steps[n].fingerprint or "": ctx.steps[n].name for n in ctx.steps},
        ),
    }
