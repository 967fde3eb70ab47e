"""Opening the run a :class:`~stemma.core.front.pipeline.Pipeline` drives: new or resumed.

What ``Pipeline.create`` and ``Pipeline.resume`` do before there is a pipeline: check the
policies, open the backend (first: a new run that will execute starts a local worker meanwhile,
see ``open_run_backend``), recover the store and open the run's context; for a resumed run, find
it and restore its finished steps. Ctrl-C is watched throughout (``watched_opening``): each step
of the opening is a moment it may stop at. Kept apart from the pipeline, which only submits and
waits.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stemma.core.engine import (
    CachePolicy,
    FailurePolicy,
    OpeningPresses,
    RunContext,
    open_context,
    open_run_backend,
    parse_policy,
    recover_store,
    shut_if_failed,
)
from stemma.core.front.run_history import latest_run_id, restore_steps
from stemma.core.store.history_source import nothing_built
from stemma.core.store.locations import usable_root
from stemma.core.store.opening import open_run_store


@dataclass(frozen=True, kw_only=True)
class OpenedRun:
    """A run ready for its pipeline: what ``Pipeline.__init__`` takes."""

    name: str
    """The pipeline's name."""
    context: RunContext
    """The run's shared context (store recovered, backend open)."""
    skip_cache: bool
    """Whether its steps skip the cache unless told otherwise."""
    failure_policy: FailurePolicy
    """Its steps' failure policy unless told otherwise."""
    first_step: int = 0
    """The number its next step gets (after a resumed run's steps)."""


def open_new_run(
    name: str,
    run_id: str,
    root: str | os.PathLike[str] | None,
    *,
    backend: str | None,
    cache_policy: CachePolicy,
    failure_policy: FailurePolicy,
    skip_cache: bool,
    preserve_working: bool,
    max_workers: int | None,
    opening: OpeningPresses,
) -> OpenedRun:
    """A new run ``run_id`` on the store at ``root``, recovered first.

    ``opening``: the presses watched since the opening began; it stops at the next step after
    one (what it started is stopped).

    Raises:
        NotARootError: the root is a file (or lies under one): before any worker starts.
        OpeningInterrupted: Ctrl-C during the opening.
    """
    usable_root(root)
    will_execute = skip_cache or nothing_built(root)
    engine = open_run_backend(backend, max_workers=max_workers, will_execute=will_execute)
    with shut_if_failed(engine):
        opening.reached("opening.workers")  # (its first worker starting, if it will execute)
        opening.reached("opening.store")
        store = open_run_store(root)
        recovered_at = recover_store(store)
        opening.reached("opening.recovered")
        context = open_context(
            store,
            run_id=run_id,
            name=name,
            engine=engine,
            max_workers=max_workers,
            cache_policy=cache_policy,
            preserve_working=preserve_working,
            recovered_at=recovered_at,
        )
        opening.reached("opening.context")
    return OpenedRun(
        name=name, context=context, skip_cache=skip_cache, failure_policy=failure_policy
    )


def open_resumed_run(
    root: str | os.PathLike[str] | None,
    pipeline_run_id: str | None,
    *,
    name: str | None,
    backend: str | None,
    max_workers: int | None,
    options: Mapping[str, Any],
    opening: OpeningPresses,
) -> OpenedRun:
    """The run ``pipeline_run_id`` (or ``name``'s newest) reopened, its finished steps restored.

    ``opening``: as for :func:`open_new_run`.

    Raises:
        ValueError: neither an id nor a name was given, no such run exists, or an unknown
            policy.
        NotARootError: the root is a file (or lies under one): before any worker starts.
        OpeningInterrupted: Ctrl-C during the opening.
    """
    usable_root(root)
    engine = open_run_backend(backend, max_workers=max_workers)  # (its workers start on demand)
    with shut_if_failed(engine):
        opening.reached("opening.store")
        store = open_run_store(root)
        recovered_at = recover_store(store)
        opening.reached("opening.recovered")
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
            engine=engine,
            max_workers=max_workers,
            cache_policy=parse_policy(
                CachePolicy, options.get("cache_policy", "all_succeeded"), "cache_policy"
            ),
            preserve_working=bool(options.get("preserve_working", False)),
            recovered_at=recovered_at,
            steps=restored,
        )
        opening.reached("opening.context")
    return OpenedRun(
        name=name,
        context=context,
        skip_cache=bool(options.get("skip_cache", False)),
        failure_policy=parse_policy(
            FailurePolicy, options.get("failure_policy", "continue"), "failure_policy"
        ),
        first_step=next_number,
    )
