"""Where a function step is found built: its completed record, or an execution left without one.

A function step's output lives outside the tables, so a hit needs both its record and its output
in place. A crash can also leave its unit committed (by the run, or by ``recover()`` at the next
start) without the step's final event: the execution is then what says it was built.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import cast

from stemma.core.artifact import Artifact
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.references import StepResult
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.step_events import event_factory, step_result
from stemma.core.engine.worker.function_operation import (
    OUTPUT_ROLE,
    OUTPUT_TYPE,
    VALUE_ROLE,
    execution_key,
    input_artifact_ids,
)
from stemma.core.graph.step_planner import artifact_from_record
from stemma.core.graph.step_spec import StepSpec
from stemma.core.records import StepRecord, StepStatus
from stemma.core.store.protocols import RunStore


def built_record(ctx: RunContext, spec: StepSpec) -> StepRecord | None:
    """The completed record of ``spec`` whose output is still in place, if there is one.

    Without an output in place no build is done, and the store need not be asked (a query
    and a staging scan per step).
    """
    if not output_in_place(ctx.store, spec.output_relpath):
        return None
    ctx.store.recover(spec.name)
    done = ctx.store.completed([spec.fingerprint]).get(spec.fingerprint)
    if done is None or not output_in_place(ctx.store, done.output_path or ""):
        return None
    return done


def output_in_place(store: object, relative: str) -> bool:
    """Whether a function step's output is on this machine, fetched first if the root keeps it.

    On a root in an object store the output is in the bucket and, once a step ran here or was
    fetched, in the local half; a store that can fetch one (``fetch_output``, stemma-storage)
    brings it here when it is whole in the bucket. One ``stat`` on any other root.
    """
    layout = cast(RunStore, store).layout
    if layout.output_dir(relative).exists():
        return True
    fetch = getattr(store, "fetch_output", None)
    return bool(fetch(relative)) if fetch is not None and relative else False


def committed_without_event(
    ctx: RunContext,
    step: PlannedStep,
    spec: StepSpec,
    deps: Mapping[str, Artifact],
    started: float,
) -> StepResult | None:
    """The step's execution, committed without its ``completed`` event, made a hit.

    A run that died between its unit's commit and its final event (or before its staged unit
    was committed: ``recover()`` did it) left an execution and no event. Write the event from
    that execution and use it: the step is never run twice.
    """
    if not output_in_place(ctx.store, spec.output_relpath):
        return None
    key = execution_key(spec, input_artifact_ids(spec, deps))
    execution = ctx.store.executions_by_key([key]).get(key)
    outputs: Mapping[str, tuple[str, ...]] = execution.outputs if execution is not None else {}
    if execution is None or not outputs.get(OUTPUT_ROLE) or not outputs.get(VALUE_ROLE):
        return None
    value_id = outputs[VALUE_ROLE][0]
    value = ctx.store.load_artifacts([value_id]).get(value_id)
    if value is None or value.content is None:
        return None
    step.outputs_from = execution.step_run_id
    final = event_factory(ctx, step, execution.step_run_id)(
        StepStatus.COMPLETED,
        total=1,
        succeeded=1,
        metadata={
            "output_path": spec.output_relpath,
            "output_artifact_id": outputs[OUTPUT_ROLE][0],
            "value_artifact_id": value_id,
            "recovered": True,
            # (as a step built here records it: the type given to apply, when one was)
            **({} if spec.type is None else {OUTPUT_TYPE: spec.type}),
        },
        duration=time.monotonic() - started,
    )
    ctx.record([final])
    ctx.monitor.units_planned(step.number, total=1, cached=1)
    ctx.monitor.step_finished(step.number, StepStatus.COMPLETED, cache="step")
    record = StepRecord(
        fingerprint=spec.fingerprint,
        name=spec.name,
        version=spec.version,
        status=StepStatus.COMPLETED,
        step_run_id=execution.step_run_id,
        run_id=ctx.run_id,
        timestamp=final.timestamp,
        config=spec.config,
        output_path=spec.output_relpath,
        output_artifact_id=outputs[OUTPUT_ROLE][0],
        value_json=value.content.decode(),
    )
    result = step_result(step, final.step_run_id, final, started, cache="step")
    return dataclasses.replace(result, artifact=artifact_from_record(ctx.store.layout.root, record))
