"""Dispatch → execute → commit for a function step: the one-unit case of ``step_dispatch``.

A function step is keyed by its front door (the spec's fingerprint), so it has no unit plan:
its one unit's execution key comes from its deps' artifacts. It is a hit when a completed record
of its key exists and its output is still on disk (the output lives outside the tables); the
lease makes concurrent runs build it once. Everything else — the backend, staging, the commit
wave, the events, the live counts, cancellation — is what every step goes through.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import cast

from stemma.core.artifact import Artifact
from stemma.core.backends.base import start_workers_early
from stemma.core.engine.cache.function_cache import built_record, committed_without_event
from stemma.core.engine.cache.step_cache import acquire_lease
from stemma.core.engine.commit.group_commit import group_commit_of
from stemma.core.engine.commit.step_finish import final_event, finish_step, skipped_by_cancel
from stemma.core.engine.commit.unit_tally import UnitTally
from stemma.core.engine.dispatch.function_packs import PendingStep
from stemma.core.engine.dispatch.function_waves import FUNCTION_KEY, function_id
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.references import StepResult
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.step_events import EventFactory, event_factory, step_result
from stemma.core.engine.worker.creator_lifecycle import EXCEPTION
from stemma.core.engine.worker.function_lifecycle import VALUE_JSON, scratch_for
from stemma.core.engine.worker.function_operation import (
    OUTPUT_TYPE,
    FunctionCall,
    FunctionOperation,
    built_outputs,
    execution_key,
    input_artifact_ids,
)
from stemma.core.engine.worker.units import ExecutionUnit, UnitGroup
from stemma.core.engine.worker.worker_entry import UnitOutcome
from stemma.core.errors import InputsChangedError, StepConfigError
from stemma.core.graph.build_config import call_arguments
from stemma.core.graph.context import StepContext
from stemma.core.graph.step import current_template
from stemma.core.graph.step_planner import artifact_from_record
from stemma.core.graph.step_spec import StepSpec
from stemma.core.identity import content_id
from stemma.core.records import StepRecord, StepStatus
from stemma.core.run_ids import new_attempt_id
from stemma.core.store.opening import store_kind
from stemma.core.store.root_urls import output_url, write_url


def run_function_step(
    ctx: RunContext, step: PlannedStep, upstream: Mapping[int, StepResult], started: float
) -> StepResult | PendingStep:
    """Build one function step (or find it built); never raises for the function's failure.

    A step that must run comes back pending: its unit is with the run's :class:`FunctionPacks`
    (packed with other steps' units), and its lease is held until it finishes.
    """
    op = cast(FunctionOperation, step.operation)
    spec = op.spec
    deps = dict(op.known_deps())
    for result in upstream.values():
        if result.artifact is None:
            return _dependency_failed(ctx, step, result.step_name, started)
        deps[result.artifact.fingerprint] = result.artifact
    if spec.mutable or step.skip_cache:
        return _execute(ctx, step, spec, deps, started, release=lambda: None)
    lease = acquire_lease(ctx, spec.fingerprint)
    if lease is None:
        return skipped_by_cancel(ctx, step, started)
    handed_over = False
    try:
        # Another run may have built it while we waited, or died after staging it: commit what
        # it staged first, so the work is never done twice.
        done = built_record(ctx, spec)
        if done is not None:
            return _cached(ctx, step, spec, done, started)
        found = committed_without_event(ctx, step, spec, deps, started)
        if found is not None:
            return found
        result = _execute(ctx, step, spec, deps, started, release=lease.release)
        handed_over = isinstance(result, PendingStep)
        return result
    finally:
        if not handed_over:
            lease.release()


def _execute(
    ctx: RunContext,
    step: PlannedStep,
    spec: StepSpec,
    deps: Mapping[str, Artifact],
    started: float,
    *,
    release: Callable[[], None],
) -> StepResult | PendingStep:
    start_workers_early(ctx.backend)
    step_run_id = new_attempt_id()
    step.outputs_from = step_run_id
    event = event_factory(ctx, step, step_run_id)
    with ctx.commit_lock:  # written with the step's final event: one write, not two
        ctx.deferred_events.append(event(StepStatus.RUNNING))
        ctx.open_attempts[step_run_id] = (step.number, event)
    inputs = input_artifact_ids(spec, deps)
    try:
        check_inputs_unchanged(spec)
        unit = function_unit(ctx, step, spec, deps, inputs, step_run_id)
    except (InputsChangedError, StepConfigError) as err:  # the step's build_config, at run time
        result = finish_step(ctx, step, event, started, dispatch_error=str(err))
        return dataclasses.replace(result, exception=err)
    ctx.monitor.units_planned(step.number, total=1, cached=0)

    def finish(outcome: UnitOutcome) -> StepResult:
        try:
            return _finish(ctx, step, spec, (event, step_run_id), started, outcome)
        finally:
            release()

    return PendingStep(ctx.function_units.submit(step, unit), finish)


def _finish(
    ctx: RunContext,
    step: PlannedStep,
    spec: StepSpec,
    attempt: tuple[EventFactory, str],
    started: float,
    outcome: UnitOutcome,
) -> StepResult:
    """Commit the unit's bundle (with other steps finishing now) and make the step's result."""
    event, step_run_id = attempt
    tally = UnitTally(expected=1)
    tally.add([outcome])
    value_json = outcome.reply.get(VALUE_JSON) if outcome.success else None
    extra = built_outputs(spec, tally.outputs)
    # The step's one bundle goes in a group commit with other steps finishing now (no step
    # outputs table rows: a function step's outputs are in its final event).
    final = group_commit_of(ctx).commit(
        list(tally.bundles),
        lambda problems: final_event(
            ctx, step, event, started, tally, problems, extra={**extra, **_function(step)}
        ),
    )
    ctx.monitor.step_finished(step.number, final.status)
    result = step_result(step, final.step_run_id, final, started, cache=None)
    if value_json is None and result.success and extra:  # settled from staging: no reply
        value_json = _committed_value(ctx, extra["value_artifact_id"])
    if not result.success or not extra or value_json is None:
        return dataclasses.replace(result, exception=outcome.reply.get(EXCEPTION))
    record = StepRecord(
        fingerprint=spec.fingerprint,
        name=spec.name,
        version=spec.version,
        status=StepStatus.COMPLETED,
        step_run_id=step_run_id,
        run_id=ctx.run_id,
        timestamp=dt.datetime.now(dt.UTC),
        config=spec.config,
        output_path=spec.output_relpath,
        output_artifact_id=extra["output_artifact_id"],
        value_json=str(value_json),
    )
    fresh = dataclasses.replace(artifact_from_record(ctx.store.layout.root, record), cached=False)
    return dataclasses.replace(result, artifact=fresh)


def _committed_value(ctx: RunContext, artifact_id: str) -> str | None:
    """The return value's JSON, read from its committed artifact.

    What a unit whose worker died after staging it (``staged_outcomes``) gives instead of
    its reply, which only the worker had.
    """
    found = ctx.store.load_artifacts([artifact_id]).get(artifact_id)
    content = found.content if found is not None else None
    return content.decode() if content is not None else None


def _function(step: PlannedStep) -> dict[str, str]:
    """The step's function, in its final event: what sizes a later wave of its calls."""
    fn = function_id(step)
    return {FUNCTION_KEY: fn} if fn is not None else {}


def function_unit(
    ctx: RunContext,
    step: PlannedStep,
    spec: StepSpec,
    deps: Mapping[str, Artifact],
    inputs: Mapping[str, tuple[str, ...]],
    step_run_id: str,
) -> ExecutionUnit:
    """The one unit of a function step: its call resolved, ``OUT`` at a fresh scratch path.

    Raises:
        StepConfigError: the step's ``build_config`` failed, or gave other arguments than when
            the step was keyed.
    """
    root = ctx.store.layout.root
    scratch = scratch_for(root, spec.output_relpath)
    attempt_url = write_url(ctx.store.layout)  # None on a filesystem
    context = StepContext.for_run(  # prefix: the root as given (a bucket's URL), never keyed
        Path(scratch),
        {dep.step: deps[dep.fingerprint].path() for dep in spec.deps},
        prefix=ctx.store.layout.shown,
        output_url=output_url(ctx.store.layout, spec.output_relpath),
        write_url=attempt_url,
    )
    call = FunctionCall(
        fn=spec.step.fn,
        kwargs=call_arguments(spec.step, context),
        output_relpath=spec.output_relpath,
        scratch=scratch,
        output_type=spec.type,
        # only a step given OUT_URL on a bucket root has objects to bring in once it returns
        write_url=attempt_url if context.write_url_asked else None,
    )
    op = cast(FunctionOperation, step.operation)
    return ExecutionUnit(
        operation=op.for_worker(call),
        step_run_id=step_run_id,
        step_spec_id=spec.fingerprint,
        step_name=spec.name,
        step_number=step.number,
        version=spec.version,
        execution_spec_id=execution_key(spec, inputs),
        groups=(UnitGroup(group_id=None, inputs=inputs),),
        root=str(root),
        backend=ctx.backend.name,
        preserve_working=ctx.preserve_working,
        provenance=spec.provenance.to_dict(),
        store_kind=store_kind(ctx.store),
    )


def _cached(
    ctx: RunContext, step: PlannedStep, spec: StepSpec, done: StepRecord, started: float
) -> StepResult:
    """Another run built it meanwhile: a step-level hit, its event written with the next one.

    The event names the type given to ``apply`` as a step built here names it.
    """
    step.outputs_from = done.step_run_id
    step_run_id = new_attempt_id()
    event = event_factory(ctx, step, step_run_id)(
        StepStatus.COMPLETED,
        total=1,
        succeeded=1,
        metadata={
            "outputs_from": done.step_run_id,
            "cache": "step",
            "output_path": done.output_path,
            "output_artifact_id": done.output_artifact_id,
            "value_artifact_id": None
            if done.value_json is None
            else content_id(done.value_json.encode()),
            **({} if spec.type is None else {OUTPUT_TYPE: spec.type}),
        },
    )
    with ctx.commit_lock:
        ctx.deferred_events.append(event)
    ctx.monitor.units_planned(step.number, total=1, cached=1)
    ctx.monitor.step_finished(step.number, StepStatus.COMPLETED, cache="step")
    result = step_result(step, step_run_id, event, started, cache="step")
    return dataclasses.replace(result, artifact=artifact_from_record(ctx.store.layout.root, done))


def _dependency_failed(
    ctx: RunContext, step: PlannedStep, culprit: str, started: float
) -> StepResult:
    """A dependency did not build: this step is skipped, and says which one."""
    step_run_id = new_attempt_id()
    step.outputs_from = step_run_id
    event: EventFactory = event_factory(ctx, step, step_run_id)
    final = event(
        StepStatus.SKIPPED,
        error=f"not run: its dependency {culprit!r} failed or was not run",
        metadata={"skip_reason": "dependency_failed"},
        duration=time.monotonic() - started,
    )
    with ctx.commit_lock:
        ctx.deferred_events.append(final)
    ctx.monitor.step_finished(step.number, StepStatus.SKIPPED)
    result = step_result(step, step_run_id, final, started, cache=None)
    return dataclasses.replace(result, success=False)


def check_inputs_unchanged(spec: StepSpec) -> None:
    """Refuse to run on inputs that changed since ``apply``: the key would describe other data.

    A mutable input object edited after ``apply``, an input file rewritten since, or a
    ``build_config`` that gives other values each time it is keyed, would otherwise be recorded
    under a fingerprint that promises other inputs.
    """
    if spec.step.build_config is None:
        now = current_template(spec.step)
    else:
        try:
            now = current_template(spec.step)
        except Exception as err:  # a user's build_config, keyed again
            raise InputsChangedError(
                f"step {spec.name!r}: its build_config failed when keyed again before the step "
                f"runs: {type(err).__name__}: {err}"
            ) from err
    if now == spec.step.template:
        return
    if spec.step.build_config is not None:
        raise InputsChangedError(
            f"step {spec.name!r}: its build_config, keyed again before the step runs, gave other "
            "arguments than at apply() (or an input changed since): build_config must be "
            "deterministic, making the step's arguments from its context and literals only"
        )
    raise InputsChangedError(
        f"step {spec.name!r}: its inputs changed after apply() (an input object was mutated "
        "or an input file rewritten), so its fingerprint no longer describes them; build "
        "the step again with apply() after the change"
    )
