"""The lazy front door: ``run`` and ``resolve`` handles against a store."""

from __future__ import annotations

import os

from stemma.core.artifact import Artifact
from stemma.core.runner import DEFAULT_MAX_CONCURRENT, StepRunner
from stemma.core.step import ArtifactStep
from stemma.core.step_planner import PlannedStep, StepPlanner
from stemma.core.step_spec import StepSpec, lower
from stemma.core.store import Store, open_store

RootLike = str | os.PathLike[str] | None


def _lower_all(handles: tuple[ArtifactStep, ...]) -> list[StepSpec]:
    memo: dict[ArtifactStep, StepSpec] = {}
    return [lower(handle, memo) for handle in handles]


def run(
    *handles: ArtifactStep,
    root: RootLike = None,
    store: Store | None = None,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
) -> list[Artifact]:
    """Lower ``handles`` with one shared memo, build what is missing, return their artifacts.

    Args:
        *handles: the steps wanted; their deps are built first.
        root: the store root (``$STEMMA_ROOT`` or ``.stemma`` when omitted); ignored if
            ``store`` is given.
        store: an open store; by default :func:`~stemma.core.store.open_store` at ``root``.
        max_concurrent: how many steps may run at once.

    Returns:
        One artifact per handle, in argument order.

    Raises:
        StepFailedError: a step failed (independent steps still ran).
    """
    store = store if store is not None else open_store(root)
    specs = _lower_all(handles)
    artifacts = StepRunner(store, max_concurrent=max_concurrent).run(specs)
    return [artifacts[spec.fingerprint] for spec in specs]


def resolve(handle: ArtifactStep, *, root: RootLike = None, store: Store | None = None) -> Artifact:
    """Build ``handle`` if needed and return its artifact: ``run(handle)[0]``."""
    return run(handle, root=root, store=store)[0]


def plan(
    *handles: ArtifactStep, root: RootLike = None, store: Store | None = None
) -> list[PlannedStep]:
    """A dry run: what ``run(*handles)`` would execute and why; reads, never writes."""
    store = store if store is not None else open_store(root)
    return StepPlanner(store).plan(_lower_all(handles))
