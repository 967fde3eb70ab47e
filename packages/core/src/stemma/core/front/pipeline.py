"""``Pipeline``: the step-by-step front door over many artifacts (docs/concepts/execution-flow.md).

``submit`` validates a step before anything is written, keys it, and hands it to a step thread
that waits for the steps it reads from; ``run`` is ``submit(...).result()``. Steps run
DAG-parallel (bounded), units go to the backend, commits are serialized.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from stemma.core.cancel_levels import CancelLevel
from stemma.core.dry_run_switch import dry_run_requested, refuse_in_dry_run
from stemma.core.engine import (
    DEFAULT_PARALLEL_STEPS,
    CachePolicy,
    EngineRun,
    ExpandedComposite,
    FailurePolicy,
    OpeningPresses,
    PlannedStep,
    RunContext,
    StepFuture,
    StepResult,
    expand_composite,
    parse_policy,
    print_cancel_summary,
    shut_if_failed,
    watched_opening,
    with_intermediates,
)
from stemma.core.execution_records import StepEvent
from stemma.core.front.input_validation import build_operation, normalize_inputs
from stemma.core.front.pipeline_opening import OpenedRun, open_new_run, open_resumed_run
from stemma.core.front.run_history import runs_frame, summarize
from stemma.core.front.run_steps import RunSteps
from stemma.core.front.sendable import refuse_unsendable_operation
from stemma.core.operations.definition import OperationDefinition
from stemma.core.run_ids import new_run_id
from stemma.core.store.history_source import open_history_store
from stemma.core.store.locations import usable_root
from stemma.core.store.protocols import RunStore


class Pipeline(RunSteps):
    """A run of steps over one store. Build one with :meth:`create` or :meth:`resume`."""

    def __init__(
        self,
        *,
        name: str,
        context: RunContext,
        skip_cache: bool,
        failure_policy: FailurePolicy,
        parallel_steps: int = DEFAULT_PARALLEL_STEPS,
        first_step: int = 0,
        earlier: Sequence[StepEvent] = (),
        opening: OpeningPresses | None = None,
    ) -> None:
        self.name = name
        self._ctx = context
        self._skip_cache = skip_cache
        self._failure_policy = failure_policy
        self._first_step = first_step
        self._earlier = {event.step_name: event for event in earlier}
        self._lock = threading.Lock()
        self._finalized = False
        self._engine = EngineRun(context, parallel_steps=parallel_steps, opening=opening)

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
            NotARootError: ``root`` is a file (or lies under one): before anything starts.
            OpeningInterrupted: Ctrl-C before the run was listed (a ``SystemExit``, code 130:
                the script ends without a traceback; nothing of the run is left).
        """
        run_id = new_run_id(name)  # checks the name before anything is opened
        cache = parse_policy(CachePolicy, cache_policy, "cache_policy")
        failures = parse_policy(FailurePolicy, failure_policy, "failure_policy")
        if dry_run_requested():  # under `stemma plan`: plan each step, run none
            from stemma.core.front.dry_pipeline import DryPipeline

            return DryPipeline.open(
                name,
                root,
                backend=backend,
                cache_policy=cache_policy,
                failure_policy=failure_policy,
                skip_cache=skip_cache,
            )
        # Ctrl-C from here on is a press: before the run is listed it stops the opening (a
        # plain exit, 130), after it cancels the run (docs/concepts/cancellation.md).
        with watched_opening() as opening:
            opened = open_new_run(
                name,
                run_id,
                root,
                backend=backend,
                cache_policy=cache,
                failure_policy=failures,
                skip_cache=skip_cache,
                preserve_working=preserve_working,
                max_workers=max_workers,
                opening=opening,
            )
            return cls._opened(opened, opening, parallel_steps=parallel_steps)

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
            NotARootError: ``root`` is a file (or lies under one): before anything starts.
            OpeningInterrupted: Ctrl-C before the run was listed again (as for :meth:`create`).
        """
        refuse_in_dry_run("Pipeline.resume")  # (before the recovery, which writes)
        with watched_opening() as opening:  # as in create
            opened = open_resumed_run(
                root,
                pipeline_run_id,
                name=name,
                backend=backend,
                max_workers=max_workers,
                options=options,
                opening=opening,
            )
            return cls._opened(opened, opening, first_step=opened.first_step)

    @classmethod
    def _opened(cls, opened: OpenedRun, opening: OpeningPresses, **extra: Any) -> Pipeline:
        """The Pipeline over a run just opened; its backend shut if making it fails."""
        with shut_if_failed(opened.context.backend):
            return cls(
                name=opened.name,
                context=opened.context,
                skip_cache=opened.skip_cache,
                failure_policy=opened.failure_policy,
                opening=opening,
                **extra,
            )

    @staticmethod
    def list_runs(root: str | os.PathLike[str] | None = None) -> pl.DataFrame:
        """Every run on the root: id, step count, last status, started, ended; newest first.

        Read where the root's history is (:mod:`stemma.core.store.history_source`), whatever
        ``$STEMMA_STORE`` says, and without creating anything on a root with no history yet.

        Raises:
            NotARootError: the root is a file (or lies under one).
        """
        store = open_history_store(usable_root(root))
        return runs_frame(store.step_events() if store is not None else [])

    @property
    def store(self) -> RunStore:
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
        refuse_unsendable_operation(op.name or type(op).__qualname__, op, self._sends_to())
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
            self._start(step)
        return StepFuture(
            step_name=step.name,
            step_number=number,
            output_types={role: spec.artifact_type for role, spec in op.outputs.items()},
            future=step.future,
        )

    def _start(self, step: PlannedStep) -> None:
        """Hand a checked, numbered step to the engine (called under the pipeline's lock)."""
        self._engine.submit(step)

    def _sends_to(self) -> str:
        """The backend the steps' units go to (what an operation must be sendable to)."""
        return self._ctx.backend.name

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
