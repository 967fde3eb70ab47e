"""``DryPipeline``: what ``Pipeline.create`` returns under ``stemma plan`` (``$STEMMA_DRY_RUN``).

Each step is keyed and looked up as it is submitted, as a real run would (see
:mod:`stemma.core.engine.step_forecast`), and settled at once: nothing is dispatched, committed
or recorded, no live state or lock is written, the store is not recovered. Its results say
what the dry run knows: a step hit offers its real outputs to the steps after it; a step that
would run offers none, and the steps that read it say they run after it.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any

from stemma.core.backends.base import Backend
from stemma.core.cancel_levels import CancelLevel
from stemma.core.engine import (
    CachePolicy,
    FailurePolicy,
    OutputReference,
    PlannedStep,
    RunContext,
    StepForecast,
    StepResult,
    default_backend,
    forecast_step,
    parse_policy,
)
from stemma.core.front.pipeline import Pipeline
from stemma.core.front.run_history import summarize
from stemma.core.live.monitor import RunMonitor
from stemma.core.run_ids import new_run_id
from stemma.core.store.history_source import open_history_store
from stemma.core.store.locations import resolve_root
from stemma.core.store.opening import open_run_store

_lock = threading.Lock()
_forecasts: list[StepForecast] = []


def forecasts() -> tuple[StepForecast, ...]:
    """Every step the dry pipelines of this process were given, in submission order."""
    with _lock:
        return tuple(_forecasts)


class _NoDispatch:
    """The dry run's backend: it is never asked to run anything (a call is a bug)."""

    name = "dry-run"
    queues_whole_waves = False

    def __getattr__(self, attribute: str) -> Any:
        raise RuntimeError(f"a dry run dispatches nothing (asked for backend.{attribute})")


class DryPipeline(Pipeline):
    """A :class:`Pipeline` that plans its steps and runs none of them."""

    def __init__(  # pyright: ignore[reportMissingSuperCall]
        self,
        *,
        name: str,
        context: RunContext,
        skip_cache: bool,
        failure_policy: FailurePolicy,
        backend: str,
    ) -> None:
        """Use :meth:`open`; no engine starts (that is the point)."""
        self.name = name
        self._ctx = context
        self._skip_cache = skip_cache
        self._failure_policy = failure_policy
        self._first_step = 0
        self._lock = threading.Lock()
        self._finalized = False
        self._forecasts: dict[int, StepForecast] = {}
        self._backend = backend
        self._history = context.store.step_events()
        self._pending: dict[str, int] = {}
        """Stand-in ids for the outputs of steps that would run, by step number."""

    @classmethod
    def open(
        cls,
        name: str,
        root: str | os.PathLike[str] | None,
        *,
        backend: str | None,
        cache_policy: str,
        failure_policy: str,
        skip_cache: bool,
    ) -> DryPipeline:
        """A dry run on the store at ``root``, read only.

        Raises:
            ValueError: an unknown policy, or a name that is not one plain path segment.
        """
        run_id = new_run_id(name)
        # The store the root's history is in (core.sqlite until imported), as `explain` reads.
        store = open_history_store(resolve_root(root)) or open_run_store(root)
        nothing: Backend = _NoDispatch()  # pyright: ignore[reportAssignmentType]
        context = RunContext(
            store=store,
            backend=nothing,
            run_id=run_id,
            steps={},
            cache_policy=parse_policy(CachePolicy, cache_policy, "cache_policy"),
            preserve_working=False,
            provenance={},
            monitor=RunMonitor(
                run_id=run_id, name=name, root=str(store.layout.root), backend=nothing.name
            ),
        )
        failures = parse_policy(FailurePolicy, failure_policy, "failure_policy")
        return cls(
            name=name,
            context=context,
            skip_cache=skip_cache,
            failure_policy=failures,
            backend=backend or default_backend(),
        )

    def _start(self, step: PlannedStep) -> None:
        """Plan the step, checked and numbered as a real one, and settle its future at once."""
        self._ctx.steps[step.number] = step  # (the engine's submit does this in a real run)
        forecast = forecast_step(
            self._ctx, step, self.name, self._forecasts, self._history, self._pending
        )
        self._forecasts[step.number] = forecast
        with _lock:
            _forecasts.append(forecast)
        step.future.set_result(_result(step, forecast))

    def _sends_to(self) -> str:
        """The backend the run would use: an operation it could not be sent to is refused."""
        return self._backend

    def artifact_ids(self, reference: OutputReference) -> tuple[str, ...]:
        """A step hit's artifact ids under a role; for a step that would run, one stand-in id.

        Its outputs are unknown until it has run, and an empty answer would plan the step fed
        them as having nothing to read: the stand-in (a well-formed id no artifact has) marks
        the step given it as running after the one that made it.
        """
        step = self._ctx.steps.get(reference.source_step)
        if step is None:
            raise ValueError(f"step #{reference.source_step} is not in run {self.run_id}")
        source = step.outputs_from
        if source is None:
            seed = f"stemma dry run {self.run_id} step {step.number} role {reference.role}"
            stand_in = hashlib.sha256(seed.encode()).hexdigest()[:32]
            self._pending[stand_in] = step.number
            return (stand_in,)
        return self._ctx.store.step_outputs([source]).get(source, {}).get(reference.role, ())

    def cancel(self, level: int | str | CancelLevel = CancelLevel.GRACEFUL) -> None:
        """Nothing runs, so there is nothing to cancel (the level is still checked).

        Raises:
            ValueError: an unknown level.
        """
        CancelLevel.parse(level)

    def finalize(self) -> dict[str, Any]:
        """The summary a real run's would have the shape of (counts are the forecast's)."""
        with self._lock:
            self._finalized = True
        steps = [self._ctx.steps[n] for n in sorted(self._ctx.steps)]
        return summarize(self.name, self.run_id, steps)


def _result(step: PlannedStep, forecast: StepForecast) -> StepResult:
    """What ``run`` returns in a dry run: a success, so the script goes on to its next step."""
    op = step.operation
    return StepResult(
        step_name=step.name,
        step_number=step.number,
        success=True,
        total_count=forecast.units or 0,
        succeeded_count=(forecast.units or 0) if forecast.action == "hit" else 0,
        failed_count=0,
        output_roles=tuple(op.outputs),
        output_types={role: spec.artifact_type for role, spec in op.outputs.items()},
        duration_seconds=0.0,
        step_run_id=forecast.outputs_from or "",
        # the keys a real result's metadata has (engine/step_events.step_result), so a script
        # that reads them is planned as it runs; ``dry_run`` and ``reason`` say what it would do
        metadata={
            "status": "planned",
            "cache": "step" if forecast.action == "hit" else None,
            "outputs_from": forecast.outputs_from,
            "step_spec_id": forecast.fingerprint,
            "skip_reason": None,
            "execution_cache_hits": forecast.cached_units or 0,
            "error": None,
            "dry_run": forecast.action,
            "reason": forecast.reason,
        },
        cached_count=forecast.cached_units or 0,
    )
