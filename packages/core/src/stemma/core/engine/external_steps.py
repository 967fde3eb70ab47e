"""A function step run by a scheduler of the user's own: its unit opened, its outcome recorded.

The engine's half of :class:`~stemma.core.front.external.ExternalRun`. Opening makes the step
and its one unit exactly as the lazy door's dispatch would (the same keys, the same ``OUT``
path); recording settles what came back as a worker would have, keeps the output where the
root keeps what lasts (on a root in an object store, copied to the bucket before anything is
committed, by the store call a worker uses), and ends the step through the same commit path:
the same execution rows, artifacts, lineage and events.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stemma.core.artifact import Artifact
from stemma.core.engine.commit.step_finish import finish_step
from stemma.core.engine.commit.unit_tally import UnitTally
from stemma.core.engine.dispatch.function_dispatch import function_unit
from stemma.core.engine.planned_step import FailurePolicy, PlannedStep
from stemma.core.engine.references import StepResult
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.step_events import event_factory
from stemma.core.engine.worker.function_lifecycle import (
    bring_written,
    function_failed,
    keep_in_store,
    settle_function,
)
from stemma.core.engine.worker.function_operation import (
    FunctionOperation,
    built_outputs,
    input_artifact_ids,
)
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.engine.worker.worker import report_outcome
from stemma.core.engine.worker.worker_entry import UnitOutcome
from stemma.core.graph.step_spec import StepSpec
from stemma.core.records import StepStatus
from stemma.core.run_ids import new_attempt_id


@dataclass(frozen=True, kw_only=True)
class ExternalUnit:
    """A step opened for an external runner: the engine's step and unit, and the call's args."""

    step: PlannedStep
    """The engine's step (its number in this run, its attempt)."""
    unit: ExecutionUnit
    """What a worker would have been sent."""
    kwargs: Mapping[str, Any]
    """The function's arguments: ``OUT`` a path beside the output, each dep its output's path."""


def open_external_unit(
    ctx: RunContext, spec: StepSpec, deps: Mapping[str, Artifact]
) -> ExternalUnit:
    """Make ``spec`` the run's next step and its one unit, as the lazy door's dispatch would.

    Args:
        ctx: the run.
        spec: the step.
        deps: each dependency's built artifact, by fingerprint.
    """
    number = len(ctx.steps)
    step = PlannedStep(
        number=number,
        name=spec.name,
        operation=FunctionOperation.of(spec, deps),
        inputs={},
        failure_policy=FailurePolicy.CONTINUE,
        skip_cache=False,
        fingerprint=spec.fingerprint,
        depends_on=tuple(dep.fingerprint for dep in spec.deps),
    )
    ctx.steps[number] = step
    step.outputs_from = new_attempt_id()
    unit = function_unit(ctx, step, spec, deps, input_artifact_ids(spec, deps), step.outputs_from)
    call = unit.operation.call if isinstance(unit.operation, FunctionOperation) else None
    assert call is not None  # function_unit always makes one
    ctx.store.layout.output_dir(spec.output_relpath).parent.mkdir(parents=True, exist_ok=True)
    return ExternalUnit(step=step, unit=unit, kwargs=call.kwargs)


def record_external_outcome(
    ctx: RunContext,
    spec: StepSpec,
    opened: ExternalUnit,
    started: float,
    value: Any = None,
    *,
    error: BaseException | None = None,
) -> StepResult:
    """Settle what the external runner got (``value``, or ``error``) and end the step.

    On a root in an object store the output is copied to the bucket (``keep_output``) before
    the step's record is committed, so a machine with another local half finds it and fetches
    it, as it does a worker's.

    Args:
        ctx: the run.
        spec: the step.
        opened: what :func:`open_external_unit` made of it.
        started: when it was opened (``time.monotonic()``), for the step's duration.
        value: what the function returned.
        error: what it raised, instead.
    """
    settled_at = dt.datetime.now(dt.UTC)
    unit = opened.unit
    if error is None:
        # As a worker does: what it put under OUT_URL becomes its output, and a record
        # committed below never names an output another machine cannot fetch (a copy that
        # fails fails the step, and nothing is recorded as built).
        try:
            bring_written(unit, ctx.store)
        except Exception as err:
            outcome = function_failed(unit, err)
        else:
            outcome = keep_in_store(unit, ctx.store, settle_function(unit, value))
    else:
        outcome = function_failed(
            unit, error if isinstance(error, Exception) else RuntimeError(str(error))
        )
    report = report_outcome(unit, outcome, settled_at, ctx.store)
    tally = UnitTally(expected=1)
    tally.add([UnitOutcome.of(report)])
    extra = built_outputs(spec, tally.outputs)
    step = opened.step
    event = event_factory(ctx, step, step.outputs_from or "")
    ctx.record([event(StepStatus.RUNNING)])
    return finish_step(ctx, step, event, started, tally, extra=extra)
