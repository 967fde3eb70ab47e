"""The engine: one scheduler for both front doors — dispatch, cache, commit, cancel, worker.

This ``__init__`` is the engine's door: the front doors (``stemma.core.front``), the command
line and the run views use the names below and nothing inside the rooms (an import-linter
contract says so). The rooms, top to bottom (a layers contract keeps the order):

- ``dispatch/``: a step's units planned, packed and sent to the backend; their outcomes taken.
- ``commit/`` | ``cache/`` | ``cancel/``: ending a step (its wave, events, result); the step
  keys and the caches; the three presses and fail-fast. Independent of each other.
- ``worker/``: what runs in a worker process: a unit's lifecycle, its inputs, its staging.

Every name is imported on first use (PEP 562): a worker importing ``engine.worker`` does not
load the scheduler with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stemma.core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from stemma.core.engine.cache.function_cache import built_record
    from stemma.core.engine.cancel.cancellation import print_cancel_summary
    from stemma.core.engine.cancel.opening_presses import OpeningPresses, watched_opening
    from stemma.core.engine.dispatch.composite_expansion import (
        ExpandedComposite,
        expand_composite,
        with_intermediates,
    )
    from stemma.core.engine.dispatch.function_dispatch import check_inputs_unchanged
    from stemma.core.engine.engine_run import DEFAULT_PARALLEL_STEPS, EngineRun
    from stemma.core.engine.external_steps import (
        ExternalUnit,
        open_external_unit,
        record_external_outcome,
    )
    from stemma.core.engine.planned_step import (
        CachePolicy,
        FailurePolicy,
        FileInputs,
        PlannedStep,
        StepInput,
        parse_policy,
    )
    from stemma.core.engine.references import OutputReference, StepFuture, StepResult
    from stemma.core.engine.run_context import RunContext
    from stemma.core.engine.run_setup import (
        default_backend,
        open_context,
        open_run_backend,
        recover_store,
        shut_if_failed,
    )
    from stemma.core.engine.runs_here import StartedRun, runs_started_here
    from stemma.core.engine.step_events import succeeded
    from stemma.core.engine.step_forecast import StepForecast, forecast_step
    from stemma.core.engine.worker.function_operation import FunctionOperation

_EXPORTS = {
    "DEFAULT_PARALLEL_STEPS": "stemma.core.engine.engine_run",
    "EngineRun": "stemma.core.engine.engine_run",
    "CachePolicy": "stemma.core.engine.planned_step",
    "FailurePolicy": "stemma.core.engine.planned_step",
    "FileInputs": "stemma.core.engine.planned_step",
    "PlannedStep": "stemma.core.engine.planned_step",
    "StepInput": "stemma.core.engine.planned_step",
    "parse_policy": "stemma.core.engine.planned_step",
    "OutputReference": "stemma.core.engine.references",
    "StepFuture": "stemma.core.engine.references",
    "StepResult": "stemma.core.engine.references",
    "RunContext": "stemma.core.engine.run_context",
    "default_backend": "stemma.core.engine.run_setup",
    "open_context": "stemma.core.engine.run_setup",
    "open_run_backend": "stemma.core.engine.run_setup",
    "recover_store": "stemma.core.engine.run_setup",
    "shut_if_failed": "stemma.core.engine.run_setup",
    "StartedRun": "stemma.core.engine.runs_here",
    "runs_started_here": "stemma.core.engine.runs_here",
    "StepForecast": "stemma.core.engine.step_forecast",
    "forecast_step": "stemma.core.engine.step_forecast",
    "ExternalUnit": "stemma.core.engine.external_steps",
    "open_external_unit": "stemma.core.engine.external_steps",
    "record_external_outcome": "stemma.core.engine.external_steps",
    "print_cancel_summary": "stemma.core.engine.cancel.cancellation",
    "OpeningPresses": "stemma.core.engine.cancel.opening_presses",
    "watched_opening": "stemma.core.engine.cancel.opening_presses",
    "succeeded": "stemma.core.engine.step_events",
    "ExpandedComposite": "stemma.core.engine.dispatch.composite_expansion",
    "expand_composite": "stemma.core.engine.dispatch.composite_expansion",
    "with_intermediates": "stemma.core.engine.dispatch.composite_expansion",
    "FunctionOperation": "stemma.core.engine.worker.function_operation",
    "check_inputs_unchanged": "stemma.core.engine.dispatch.function_dispatch",
    "built_record": "stemma.core.engine.cache.function_cache",
}
"""Each public name and the module that defines it."""

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    # a run of the engine, whichever door fills it
    "DEFAULT_PARALLEL_STEPS",
    "EngineRun",
    "RunContext",
    "StartedRun",
    "default_backend",
    "open_context",
    "open_run_backend",
    "recover_store",
    "runs_started_here",
    "shut_if_failed",
    # steps as the engine holds them, and what a step hands back
    "CachePolicy",
    "FailurePolicy",
    "FileInputs",
    "OutputReference",
    "PlannedStep",
    "StepFuture",
    "StepInput",
    "StepResult",
    "parse_policy",
    "succeeded",
    # what the doors ask of the engine for a step
    "ExpandedComposite",
    "ExternalUnit",
    "FunctionOperation",
    "StepForecast",
    "built_record",
    "check_inputs_unchanged",
    "expand_composite",
    "forecast_step",
    "open_external_unit",
    "record_external_outcome",
    "with_intermediates",
    # cancellation
    "OpeningPresses",
    "print_cancel_summary",
    "watched_opening",
]
