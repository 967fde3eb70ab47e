"""The lazy front door: ``run``, ``resolve`` and ``plan`` handles against a store.

``run`` lowers the handles with one shared memo and hands the graph to the engine
(:mod:`stemma.core.front.lazy_door`): every lazy run is a run — a run id, live state under
``runs/``, ``stemma runs`` and the dashboard, three-press cancel — on the backend asked for.
"""

from __future__ import annotations

import os

from stemma.core.artifact import Artifact
from stemma.core.front.recorded_types import with_recorded_types
from stemma.core.graph.step import ArtifactStep
from stemma.core.graph.step_planner import PlanEntry, StepPlanner
from stemma.core.graph.step_spec import StepSpec, lower
from stemma.core.store.opening import open_run_store, open_store
from stemma.core.store.protocols import RunStore, Store

RootLike = str | os.PathLike[str] | None
DEFAULT_PARALLEL_STEPS = 64


def _lower_all(handles: tuple[ArtifactStep, ...]) -> list[StepSpec]:
    memo: dict[ArtifactStep, StepSpec] = {}
    return [lower(handle, memo) for handle in handles]


def run(
    *handles: ArtifactStep,
    root: RootLike = None,
    store: RunStore | None = None,
    backend: str | None = None,
    max_workers: int | None = None,
    parallel_steps: int = DEFAULT_PARALLEL_STEPS,
    name: str = "lazy",
) -> list[Artifact]:
    """Lower ``handles`` with one shared memo, build what is missing, return their artifacts.

    Args:
        *handles: the steps wanted; their deps are built first.
        root: the store root (``$STEMMA_ROOT`` or ``.stemma`` when omitted); ignored if
            ``store`` is given.
        store: an open store; by default the one at ``root``.
        backend: where steps run: ``local`` (a process pool), ``local-thread`` (threads of this
            process, for functions that cannot be pickled), ``slurm``, ``slurm-intra``; None for
            ``$STEMMA_BACKEND``, else ``local``. Never part of a key.
        max_workers: worker processes (or threads) of a local backend; the CPU count when None.
        parallel_steps: how many steps may dispatch at once.
        name: the run's name: its id starts with it, ``stemma runs`` lists it.

    Returns:
        One artifact per handle, in argument order, each with the type recorded with its
        output (``.type``).

    Raises:
        StepFailedError: a step failed (independent steps still ran), or the run was cancelled.
        UnpicklableStepError: a process backend cannot send a step's function (before anything
            runs; the message names both fixes).
        StepCycleError: the graph has a cycle (before anything runs).
        NotARootError: ``root`` is a file, or lies under one (before anything runs).
        OpeningInterrupted: Ctrl-C before the run was listed (a ``SystemExit``, code 130: the
            script ends without a traceback; nothing of the run is left).
    """
    from stemma.core.engine import watched_opening  # (light: the engine's door loads lazily)

    # Ctrl-C from here on is a press: before the run is listed it stops the opening (a plain
    # exit, 130), after it cancels the run (docs/concepts/cancellation.md).
    with watched_opening() as opening:
        from stemma.core.front.lazy_door import LazyRunOptions, build  # loads pydantic

        opening.reached("opening.store")
        store = store if store is not None else open_run_store(root)
        specs = _lower_all(handles)
        options = LazyRunOptions(
            backend=backend, max_workers=max_workers, parallel_steps=parallel_steps, name=name
        )
        artifacts = build(specs, store, options, opening)
    return with_recorded_types(store, [artifacts[spec.fingerprint] for spec in specs])


def resolve(
    handle: ArtifactStep,
    *,
    root: RootLike = None,
    store: RunStore | None = None,
    backend: str | None = None,
    max_workers: int | None = None,
    parallel_steps: int = DEFAULT_PARALLEL_STEPS,
    name: str = "lazy",
) -> Artifact:
    """Build ``handle`` if needed and return its artifact: ``run(handle, ...)[0]``.

    Takes every setting :func:`run` takes, with the same defaults, and passes them on.

    Args:
        handle: the step wanted; its deps are built first.
        root: the store root (``$STEMMA_ROOT`` or ``.stemma`` when omitted); ignored if
            ``store`` is given.
        store: an open store; by default the one at ``root``.
        backend: where steps run: ``local``, ``local-thread``, ``slurm``, ``slurm-intra``; None
            for ``$STEMMA_BACKEND``, else ``local``. Never part of a key.
        max_workers: worker processes (or threads) of a local backend; the CPU count when None.
        parallel_steps: how many steps may dispatch at once.
        name: the run's name: its id starts with it, ``stemma runs`` lists it.

    Returns:
        The step's artifact.

    Raises:
        StepFailedError: the step or one of its deps failed, or the run was cancelled
            (``RunCancelledError``).
        UnpicklableStepError: a process backend cannot send a step's function.
        StepCycleError: the graph has a cycle.
        NotARootError: ``root`` is a file, or lies under one.
    """
    return run(
        handle,
        root=root,
        store=store,
        backend=backend,
        max_workers=max_workers,
        parallel_steps=parallel_steps,
        name=name,
    )[0]


def plan(
    *handles: ArtifactStep, root: RootLike = None, store: Store | None = None
) -> list[PlanEntry]:
    """A dry run: what ``run(*handles)`` would execute and why; reads, never writes.

    Raises:
        NotARootError: ``root`` is a file, or lies under one.
    """
    store = store if store is not None else open_store(root)
    return StepPlanner(store).plan(_lower_all(handles))
