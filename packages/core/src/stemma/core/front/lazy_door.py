"""The lazy front door's translation: a lowered graph of function steps into one engine run.

``run()`` lowers handles to specs; this module finds which are built already (one store query
for the whole graph, never looking below a built step), numbers the rest so that every step
comes after its deps, and submits each as a :class:`FunctionOperation` step of one
:class:`EngineRun` — the same scheduler, backends, commits, live state and cancel presses as a
``Pipeline`` run. Nothing here runs a step itself.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

from stemma.core.artifact import Artifact
from stemma.core.backends.main_module import bootstrapping_worker, main_problem
from stemma.core.cancel_levels import CancelLevel
from stemma.core.engine import (
    DEFAULT_PARALLEL_STEPS,
    CachePolicy,
    EngineRun,
    FailurePolicy,
    FunctionOperation,
    OpeningPresses,
    PlannedStep,
    RunContext,
    StepResult,
    default_backend,
    open_context,
    open_run_backend,
    print_cancel_summary,
    recover_store,
    shut_if_failed,
)
from stemma.core.errors import (
    DamagedStoreError,
    RunCancelledError,
    StepFailedError,
    UnpicklableStepError,
)
from stemma.core.front.lazy_operations import (
    is_operation_step,
    operation_artifact,
    operation_planned,
    refuse_operation_deps,
)
from stemma.core.front.run_history import summarize
from stemma.core.front.sendable import THREAD_BACKEND, refuse_unsendable_operation
from stemma.core.front.step_failures import failure_cause
from stemma.core.graph.step_graph import expand, needed
from stemma.core.graph.step_planner import StepPlanner
from stemma.core.graph.step_spec import StepSpec
from stemma.core.operations.kinds import OperationKind
from stemma.core.run_ids import new_run_id
from stemma.core.store.protocols import RunStore

log = logging.getLogger("stemma.core.lazy")


@dataclass(frozen=True, kw_only=True)
class LazyRunOptions:
    """How a lazy run executes; none of it is part of any key."""

    backend: str | None = None
    """``local`` (process pool, the default), ``local-thread``, ``slurm``, ``slurm-intra``; None
    for ``$STEMMA_BACKEND``, else ``local``."""
    max_workers: int | None = None
    """Workers of a local backend; the machine's CPU count when None."""
    parallel_steps: int = DEFAULT_PARALLEL_STEPS
    """Steps dispatched at once."""
    name: str = "lazy"
    """The run's name (its id starts with it; ``stemma runs`` shows it)."""


def build(
    specs: Sequence[StepSpec],
    store: RunStore,
    options: LazyRunOptions,
    opening: OpeningPresses | None = None,
) -> dict[str, Artifact]:
    """Build every spec and its deps that are not built yet; artifacts by fingerprint.

    ``opening``: the presses watched since ``run()`` began (``watched_opening``); the run's
    opening stops at its next step after one, and the run takes them over once listed. None:
    no press is watched before the first step (as a test calls it).

    Raises:
        OpeningInterrupted: Ctrl-C before the run was listed (what it started is stopped).
        StepCycleError: the graph has a cycle (before anything runs).
        UnpicklableStepError: a process backend and a function it cannot send (before anything
            runs).
        StepFailedError: a step failed; independent steps still ran. ``__cause__`` holds the
            first failure's error.
    """
    if bootstrapping_worker():
        raise RuntimeError(
            "stemma.core.run() was called while a worker process was starting: the script that "
            'calls it runs again in every worker; put its work under `if __name__ == "__main__":`'
        )
    opening = opening if opening is not None else OpeningPresses()  # (unwatched: never pressed)
    run_id = new_run_id(options.name)  # checks the name before anything is opened
    seen: dict[str, StepSpec] = {}
    for spec in specs:
        expand(spec, seen)
    recovered_at = recover_store(store)
    opening.reached("opening.recovered")
    built = _built(store, list(seen.values()))
    order = deps_first([spec for root in specs for spec in needed(root, built)])
    if not order:
        return built
    _log_reasons(store, order)
    backend = options.backend or default_backend()
    from_main = any(
        getattr(s.step.fn, "__module__", None) == "__main__"
        for s in order
        if not is_operation_step(s)
    )
    numbers = {spec.fingerprint: number for number, spec in enumerate(order)}
    planned = [_planned(numbers[spec.fingerprint], spec, built, numbers) for spec in order]
    if backend != THREAD_BACKEND:
        _refuse_unpicklable([s for s in order if not is_operation_step(s)], backend)
        for step in planned:
            if step.operation.kind is not OperationKind.FUNCTION:
                refuse_unsendable_operation(step.name, step.operation, backend)
    # ``order`` holds what must execute: its backend starts a worker now.
    workers = open_run_backend(
        backend, max_workers=options.max_workers, import_main=from_main, will_execute=True
    )
    with shut_if_failed(workers):
        opening.reached("opening.workers")  # its first worker starting
        context = open_context(
            store,
            run_id=run_id,
            name=options.name,
            engine=workers,
            max_workers=options.max_workers,
            cache_policy=CachePolicy.ALL_SUCCEEDED,
            preserve_working=False,
            recovered_at=recovered_at,
        )
        opening.reached("opening.context")
        engine = EngineRun(context, parallel_steps=options.parallel_steps, opening=opening)
    try:
        for step in planned:
            engine.submit(step)
    finally:
        engine.end()
    if context.cancel_level:
        _cancelled(context, planned)
    return _collect(store, list(zip(planned, order, strict=True)), built)


def _cancelled(context: RunContext, steps: list[PlannedStep]) -> NoReturn:
    """Say what the cancel did, as a Pipeline run does, and stop the caller."""
    summary = summarize(context.run_id.rsplit("_", 3)[0], context.run_id, steps)
    print_cancel_summary(summary, context.cancel_level)
    unfinished = [row["name"] for row in summary["steps"] if row["status"] != "completed"]
    raise RunCancelledError(
        f"run {context.run_id} was cancelled ({CancelLevel(context.cancel_level).name.lower()}); "
        f"not built: {', '.join(unfinished)}. Run it again to build only those",
        failed=[],
        skipped=unfinished,
    )


def _log_reasons(store: RunStore, specs: list[StepSpec]) -> None:
    """Say why each step will run (the reason costs a store query: only when it is shown)."""
    if not log.isEnabledFor(logging.INFO):
        return
    planner = StepPlanner(store)
    for spec in specs:
        log.info("step %s (%s) will run: %s", spec.name, spec.fingerprint[:8], planner.reason(spec))


def _built(store: RunStore, specs: list[StepSpec]) -> dict[str, Artifact]:
    """The function steps recorded completed whose output is still in place (never ``dev``).

    Operation steps are never built this way: their cache is the engine's step index.
    """
    return StepPlanner(store).built([s for s in specs if not is_operation_step(s)])


def deps_first(specs: list[StepSpec]) -> list[StepSpec]:
    """``specs`` (deduplicated) ordered so that each comes after those of its deps among them."""
    wanted = {spec.fingerprint: spec for spec in specs}
    order: list[StepSpec] = []
    placed: set[str] = set()
    for spec in wanted.values():
        stack: list[tuple[StepSpec, bool]] = [(spec, False)]
        while stack:
            node, expanded = stack.pop()
            if node.fingerprint in placed:
                continue
            if expanded:
                placed.add(node.fingerprint)
                order.append(node)
                continue
            stack.append((node, True))
            stack.extend(
                (dep, False)
                for dep in reversed(node.deps)
                if dep.fingerprint in wanted and dep.fingerprint not in placed
            )
    return order


def _planned(
    number: int, spec: StepSpec, built: Mapping[str, Artifact], numbers: Mapping[str, int]
) -> PlannedStep:
    """The engine step of one spec: an operation step's, or a function step's."""
    if is_operation_step(spec):
        return operation_planned(number, spec, numbers)
    refuse_operation_deps(spec)
    known = {d.fingerprint: built[d.fingerprint] for d in spec.deps if d.fingerprint in built}
    resources = spec.step.resources
    operation = (
        FunctionOperation.of(spec, known)
        if resources is None
        else FunctionOperation.of(spec, known, resources=resources)
    )
    return PlannedStep(
        number=number,
        name=spec.name,
        operation=operation,
        inputs={},
        failure_policy=FailurePolicy.CONTINUE,
        skip_cache=False,
        fingerprint=spec.fingerprint,
        after=_numbers_of(spec.deps, numbers),
        depends_on=tuple(dep.fingerprint for dep in spec.deps),
    )


def _numbers_of(deps: Sequence[StepSpec], numbers: Mapping[str, int]) -> tuple[int, ...]:
    """The step numbers of the deps that are steps of this run (the others were built)."""
    return tuple(sorted({numbers[d.fingerprint] for d in deps if d.fingerprint in numbers}))


def _refuse_unpicklable(specs: list[StepSpec], backend: str) -> None:
    """A process backend sends each function to a worker by reference: check them all now."""
    checked: set[int] = set()
    for spec in specs:
        fn = spec.step.fn
        if id(fn) in checked:
            continue
        checked.add(id(fn))
        name = getattr(fn, "__qualname__", repr(fn))
        try:
            pickle.dumps(fn)
        except Exception as err:
            raise UnpicklableStepError(
                f"step {spec.name!r}: its function {name} cannot be sent to a {backend!r} "
                f"worker ({type(err).__name__}: {err}). Define it at the top level of a module "
                "(not inside a function, not a lambda), or run it in this process with "
                f"run(..., backend={THREAD_BACKEND!r})"
            ) from None
        problem = main_problem() if getattr(fn, "__module__", None) == "__main__" else None
        if problem is not None and backend == "local":  # SLURM jobs pickle it by value
            raise UnpicklableStepError(
                f"step {spec.name!r}: its function {name} cannot be sent to a worker process: "
                f"{problem}. Or define it in a module, or run it in this process with "
                f"run(..., backend={THREAD_BACKEND!r})"
            )


def _collect(
    store: RunStore, steps: list[tuple[PlannedStep, StepSpec]], built: dict[str, Artifact]
) -> dict[str, Artifact]:
    artifacts = dict(built)
    failed: list[tuple[str, BaseException]] = []
    skipped: list[str] = []
    results: list[tuple[PlannedStep, StepSpec, StepResult]] = []
    for step, spec in steps:
        error = step.future.exception()
        result = None if error is not None else step.future.result()
        if result is not None and result.metadata.get("skip_reason") is not None:
            skipped.append(step.name)
        elif result is None or not result.success:
            failed.append((step.name, error or failure_cause(step.name, result)))
        elif result.artifact is not None:
            artifacts[result.artifact.fingerprint] = result.artifact
        else:
            results.append((step, spec, result))
    if results:  # operation steps: their outputs by role, one read for all of them
        offered = store.step_outputs([step.outputs_from or "" for step, _, _ in results])
        for step, spec, result in results:
            outputs = offered.get(step.outputs_from or "", {})
            artifacts[spec.fingerprint] = operation_artifact(
                store.layout.root, spec, result, outputs
            )
    if failed or skipped:
        raise _failure(failed, skipped)
    return artifacts


def _failure(failed: list[tuple[str, BaseException]], skipped: list[str]) -> StepFailedError:
    names = [name for name, _ in failed]
    message = (
        f"{len(failed)} step(s) failed: {', '.join(names)}" if failed else "the run was cancelled"
    )
    if skipped:
        message += f"; {len(skipped)} not run: {', '.join(sorted(skipped))}"
    if failed and isinstance(failed[0][1], DamagedStoreError):  # the root's, not the steps'
        message += f". {failed[0][1]}"
    error = StepFailedError(message, failed=names, skipped=sorted(skipped))
    if failed:
        error.__cause__ = failed[0][1]
    return error
