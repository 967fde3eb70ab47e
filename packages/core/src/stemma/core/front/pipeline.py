"""``Pipeline``: the step-by-step front door over many artifacts (docs/concepts/execution-flow.md).

``submit`` validates a step before anything is written, keys it, and hands it to a step thread
that waits for the steps it reads from; ``run`` is ``submit(...).result()``. Steps run
DAG-parallel (bounded), units go to the backend, commits are serialized.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import polars as pl

from stemma.core.cancel_levels import CancelLevel
from stemma.core.dry_run_switch import dry_run_requested, refuse_in_dry_run
from stemma.core.engine.cancellation import print_cancel_summary
from stemma.core.engine.composite_expansion import (
    ExpandedComposite,
    expand_composite,
    with_intermediates,
)
from stemma.core.engine.engine_run import DEFAULT_PARALLEL_STEPS, EngineRun
from stemma.core.engine.planned_step import (
    CachePolicy,
    FailurePolicy,
    PlannedStep,
    parse_policy,
)
from stemma.core.engine.references import OutputReference, StepFuture, StepResult
from stemma.core.engine.run_context import PipelineContext
from stemma.core.engine.run_setup import open_context
from stemma.core.execution_records import StepEvent
from stemma.core.front.input_validation import build_operation, normalize_inputs
from stemma.core.front.run_history import (
    latest_run_id,
    restore_steps,
    runs_frame,
    summarize,
)
from stemma.core.front.sendable import refuse_unsendable_operation
from stemma.core.front.step_failures import halted_error
from stemma.core.operations.definition import OperationDefinition
from stemma.core.run_ids import new_run_id
from stemma.core.store import PipelineStore, open_pipeline_store


class Pipeline:
    """A run of steps over one store. Build one with :meth:`create` or :meth:`resume`."""

    def __init__(
        self,
        *,
        name: str,
        context: PipelineContext,
        skip_cache: bool,
        failure_policy: FailurePolicy,
        parallel_steps: int = DEFAULT_PARALLEL_STEPS,
        first_step: int = 0,
        earlier: Sequence[StepEvent] = (),
    ) -> None:
        self.name = name
        self._ctx = context
        self._skip_cache = skip_cache
        self._failure_policy = failure_policy
        self._first_step = first_step
        self._earlier = {event.step_name: event for event in earlier}
        self._lock = threading.Lock()
        self._finalized = False
        self._engine = EngineRun(context, parallel_steps=parallel_steps)

    # ------------------------------------------------------------------ construction

    @classmethod
    def create(
        cls,
        name: str,
        root: str | os.PathLike[str] | None = None,
        *,
        backend: str | None = None,
        failure_policy: str = "continue",
        cache_policy: str = "all_succeeded",
        skip_cache: bool = False,
        preserve_working: bool = False,
        max_workers: int | None = None,
        parallel_steps: int = DEFAULT_PARALLEL_STEPS,
    ) -> Pipeline:
        """Start a new run named ``name`` on the store at ``root`` (``.stemma`` by default).

        ``backend`` None means ``$STEMMA_BACKEND``, else ``local`` (so ``stemma run --backend
        slurm script.py`` moves a script without editing it).

        Raises:
            StoreUnavailableError: stemma-storage (the Delta store) is not installed.
            ValueError: an unknown policy name, or a name that is not one plain path segment.
        """
        run_id = new_run_id(name)  # checks the name before anything is opened
        cache = parse_policy(CachePolicy, cache_policy, "cache_policy")
        failures = parse_policy(FailurePolicy, failure_policy, "failure_policy")
        if dry_run_requested():  # under `stemma plan`: plan each step, run none
            from stemma.core.front.dry_pipeline import DryPipeline

            return DryPipeline.open(
                name,
                root,
                cache_policy=cache_policy,
                failure_policy=failure_policy,
                skip_cache=skip_cache,
            )
        store = open_pipeline_store(root)
        store.recover()
        context = open_context(
            store,
            run_id=run_id,
            name=name,
            backend=backend,
            max_workers=max_workers,
            cache_policy=cache,
            preserve_working=preserve_working,
        )
        return cls(
            name=name,
            context=context,
            skip_cache=skip_cache,
            failure_policy=failures,
            parallel_steps=parallel_steps,
        )

    @classmethod
    def resume(
        cls,
        root: str | os.PathLike[str] | None = None,
        pipeline_run_id: str | None = None,
        *,
        name: str | None = None,
        backend: str | None = None,
        max_workers: int | None = None,
        **options: Any,
    ) -> Pipeline:
        """Continue a run: its id, its step numbering, and references to its finished steps.

        Args:
            root: the store root.
            pipeline_run_id: the run to continue; or give ``name`` for its newest run.
            name: the pipeline name, when ``pipeline_run_id`` is not given.
            backend: where new steps run; None for ``$STEMMA_BACKEND``, else ``local``.
            max_workers: worker processes of the local backend.
            **options: ``failure_policy``, ``cache_policy``, ``skip_cache``, ``preserve_working``.

        Raises:
            ValueError: neither an id nor a name was given, or no such run exists.
        """
        refuse_in_dry_run("Pipeline.resume")  # (before the recovery, which writes)
        store = open_pipeline_store(root)
        store.recover()
        if pipeline_run_id is None:
            if name is None:
                raise ValueError("resume needs pipeline_run_id or name")
            pipeline_run_id = latest_run_id(store.step_events(), name)
            if pipeline_run_id is None:
                raise ValueError(f"no run of pipeline {name!r} under {store.layout.root}")
        events = store.step_events(pipeline_run_id)
        if not events:
            raise ValueError(f"no run {pipeline_run_id!r} under {store.layout.root}")
        restored, next_number = restore_steps(events)
        name = pipeline_run_id.rsplit("_", 3)[0]
        context = open_context(
            store,
            run_id=pipeline_run_id,
            name=name,
            backend=backend,
            max_workers=max_workers,
            cache_policy=parse_policy(
                CachePolicy, options.get("cache_policy", "all_succeeded"), "cache_policy"
            ),
            preserve_working=bool(options.get("preserve_working", False)),
            steps=restored,
        )
        return cls(
            name=name,
            context=context,
            skip_cache=bool(options.get("skip_cache", False)),
            failure_policy=parse_policy(
                FailurePolicy, options.get("failure_policy", "continue"), "failure_policy"
            ),
            first_step=next_number,
        )

    @staticmethod
    def list_runs(root: str | os.PathLike[str] | None = None) -> pl.DataFrame:
        """Every run on the root: id, step count, last status, started, ended; newest first."""
        return runs_frame(open_pipeline_store(root).step_events())

    @property
    def run_id(self) -> str:
        """``{name}_{UTC %Y%m%d_%H%M%S}_{8 hex}``."""
        return self._ctx.run_id

    @property
    def store(self) -> PipelineStore:
        """The store this pipeline commits to."""
        return self._ctx.store

    # ------------------------------------------------------------------ steps

    def submit(
        self,
        operation: type[OperationDefinition] | str,
        inputs: Mapping[str, Any] | Sequence[Any] | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        resources: Mapping[str, Any] | None = None,
        execution: Mapping[str, Any] | None = None,
        environment: Mapping[str, str] | None = None,
        tool: Mapping[str, Any] | None = None,
        failure_policy: str | None = None,
        skip_cache: bool = False,
        intermediates: str | None = None,
    ) -> StepFuture:
        """Validate and submit a step; return at once with a future.

        A composite runs collapsed (one worker per unit); ``intermediates`` (``discard``,
        ``persist``, ``expose``) says what of its inner operations is committed.

        Raises:
            ValueError: unknown params, resources or execution keys; unknown or missing roles;
                artifact-type mismatches; references to steps that do not exist. Nothing is
                written when this is raised.
        """
        op = build_operation(
            operation,
            params=params,
            resources=resources,
            execution=execution,
            environment=environment,
            tool=tool,
        )
        op = with_intermediates(op, intermediates)
        refuse_unsendable_operation(op.name or type(op).__qualname__, op, self._ctx.backend.name)
        self._raise_if_halted()
        with self._lock:
            if self._finalized:
                raise RuntimeError(f"pipeline {self.run_id} is finalized; create or resume another")
            number = max([self._first_step - 1, *self._ctx.steps]) + 1
            step = PlannedStep(
                number=number,
                name=name or op.name or "step",
                operation=op,
                inputs=normalize_inputs(op, inputs, self._step_numbers()),
                failure_policy=parse_policy(FailurePolicy, failure_policy, "failure_policy")
                if failure_policy
                else self._failure_policy,
                skip_cache=skip_cache or self._skip_cache,
            )
            self._engine.submit(step)
        return StepFuture(
            step_name=step.name,
            step_number=number,
            output_types={role: spec.artifact_type for role, spec in op.outputs.items()},
            future=step.future,
        )

    def run(
        self,
        operation: type[OperationDefinition] | str,
        inputs: Mapping[str, Any] | Sequence[Any] | None = None,
        params: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> StepResult:
        """Submit a step and wait for its result.

        Raises:
            StepFailedError: this step, or one before it, failed under ``fail_fast``; it chains
                the failed unit's own exception.
        """
        result = self.submit(operation, inputs, params, **options).result()
        self._raise_if_halted()
        return result

    def expand(
        self,
        composite: type[OperationDefinition] | str,
        inputs: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        prefix: str | None = None,
        intermediates: str = "expose",
    ) -> ExpandedComposite:
        """Submit each ``ctx.run`` of a composite as a step named ``{prefix}.{op name}``.

        Raises:
            ValueError: not a composite; bad params or inputs; a wiring mistake in compose.
        """
        op = build_operation(
            composite, params=params, resources=None, execution=None, environment=None, tool=None
        )
        given = normalize_inputs(op, inputs, self._step_numbers())
        return expand_composite(op, given, self.submit, prefix=prefix, intermediates=intermediates)

    def _step_numbers(self) -> dict[int, PlannedStep]:
        return dict(self._ctx.steps)

    def output(self, name: str, role: str, *, step_number: int | None = None) -> OutputReference:
        """A reference to ``role`` of the latest step called ``name`` (or of ``step_number``).

        Raises:
            ValueError: no such step or role; the message lists what there is.
            StepFailedError: a step failed under ``fail_fast``: nothing more may read from it.
        """
        self._raise_if_halted()
        candidates = [
            s
            for s in list(self._ctx.steps.values())
            if s.name == name and step_number in (None, s.number)
        ]
        if not candidates:
            known = sorted({s.name for s in list(self._ctx.steps.values())})
            raise ValueError(
                f"no step named {name!r} in run {self.run_id}; "
                f"steps: {', '.join(known) or '(none)'}"
            )
        step = candidates[-1]
        spec = step.operation.outputs.get(role)
        if spec is None:
            raise ValueError(
                f"step {name!r} has no output role {role!r}; "
                f"its roles: {', '.join(step.operation.outputs) or '(none)'}"
            )
        return OutputReference(step.number, role, spec.artifact_type)

    def artifact_ids(self, reference: OutputReference) -> tuple[str, ...]:
        """The artifact ids a step offers under a role, once that step has finished.

        Raises:
            ValueError: the reference names a step that is not in this pipeline.
        """
        step = self._ctx.steps.get(reference.source_step)
        if step is None:
            raise ValueError(f"step #{reference.source_step} is not in run {self.run_id}")
        step.future.result()
        source = step.outputs_from or ""
        return self._ctx.store.step_outputs([source]).get(source, {}).get(reference.role, ())

    def cancel(self, level: int | str | CancelLevel = CancelLevel.GRACEFUL) -> None:
        """Cancel the run at ``level``: 1 graceful, 2 force, 3 hard (see :class:`CancelLevel`).

        Graceful: nothing new is dispatched, running units finish and are committed, the
        interrupted step is ``cancelled`` and later steps are ``skipped``. Force: queued units
        are dropped and running workers terminated. Hard: everything is killed, then
        ``KeyboardInterrupt`` is raised in the main thread (``finally`` blocks run) and the
        process exits with code 130 if it is still alive 5 s later; in a notebook's kernel the
        kernel lives on. Staged work is committed at the next start. Levels only go up;
        thread-safe, and the way to cancel from a server (signal handlers need the main thread).

        Raises:
            ValueError: an unknown level.
        """
        self._engine.cancel(level)

    def finalize(self) -> dict[str, Any]:
        """Wait for every step, stop the backend, and summarize the run.

        Raises:
            StepFailedError: a step failed under ``fail_fast`` (after the run is closed and
                its summary recorded); it chains the failed unit's own exception.
        """
        with self._lock:
            self._finalized = True
        self._engine.end()
        steps = [self._ctx.steps[n] for n in sorted(self._ctx.steps)]
        summary = summarize(self.name, self.run_id, steps)
        if self._ctx.cancel_level:
            print_cancel_summary(summary, self._ctx.cancel_level)
        self._raise_if_halted()
        return summary

    def _raise_if_halted(self) -> None:
        error = halted_error(self._ctx)
        if error is not None:
            raise error

    # ------------------------------------------------------------------ sequence protocol

    def __len__(self) -> int:
        return len(self._ctx.steps)

    def __iter__(self) -> Iterator[StepResult]:
        return (step.future.result() for step in list(self._ctx.steps.values()))

    def __getitem__(self, index: int) -> StepResult:
        return self._ctx.steps[index].future.result()  # by step number

    def __contains__(self, name: object) -> bool:
        return any(step.name == name for step in list(self._ctx.steps.values()))

    def __bool__(self) -> bool:
        return bool(self._ctx.steps) and all(result.success for result in self)
