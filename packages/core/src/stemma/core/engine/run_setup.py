"""Opening a pipeline run: its store (recovered), its backend and the context its steps share.

One place for what ``Pipeline.create`` and ``Pipeline.resume`` have in common.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Generator, Mapping
from typing import Any

from stemma.core.backends.base import Backend, start_workers_early
from stemma.core.backends.registry import open_backend
from stemma.core.dry_run_switch import refuse_in_dry_run
from stemma.core.engine.planned_step import CachePolicy, PlannedStep
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.runs_here import note_run
from stemma.core.engine.worker_slots import WorkerSlots
from stemma.core.live.monitor import RunMonitor
from stemma.core.provenance import capture_provenance
from stemma.core.store.protocols import RunStore
from stemma.core.store.read_only_root import ReadOnlyRootStore
from stemma.core.store.staging.visibility import SharedStagingStore, shares_root

BACKEND_ENV = "STEMMA_BACKEND"


def default_backend() -> str:
    """``$STEMMA_BACKEND``, else ``local``: what ``backend=None`` means."""
    return os.environ.get(BACKEND_ENV) or "local"


def open_run_backend(
    backend: str | None,
    *,
    max_workers: int | None,
    import_main: bool = True,
    will_execute: bool = False,
) -> Backend:
    """Open the run's backend; ``will_execute`` also starts its first worker now.

    A run that knows as it opens that a step will execute (nothing on its root can be answered
    from the store, or it skips the cache) opens its backend before its store, and its first
    local worker's start-up (half a second of imports) passes while the orchestrator imports
    and recovers the store. Any other run starts it when its first step misses the cache
    (``start_workers_early``), so a fully cached run starts none.

    ``import_main`` False starts local workers without running the main script again (nothing
    they run is defined there).

    Raises:
        BackendUnavailableError: the backend's package is not installed (the message says
            which).
    """
    chosen = backend or default_backend()
    options: dict[str, Any] = {"max_workers": max_workers}
    if chosen == "local":  # only a spawned pool re-runs the main script (see main_module)
        options["import_main"] = import_main
    engine = open_backend(chosen, **options)
    if will_execute:
        start_workers_early(engine)
    return engine


def recover_store(store: RunStore) -> float:
    """Commit what crashed runs left staged on ``store``; when that began (Unix time).

    The time goes with every wave the run sends (``WaveRequest.recovered_at``): what a dead
    run's element stages after it began is committed only by a rerun that adopts the element,
    however long the run takes after its recovery to open its backend.
    """
    began = time.time()
    store.recover()
    return began


@contextlib.contextmanager
def shut_if_failed(engine: Backend) -> Generator[None]:
    """Stop ``engine`` (a worker it started early) if the run cannot open: nothing will use it."""
    try:
        yield
    except BaseException:
        engine.shutdown(cancel_pending=True)
        raise


def open_context(
    store: RunStore,
    *,
    run_id: str,
    name: str,
    engine: Backend,
    max_workers: int | None,
    cache_policy: CachePolicy,
    preserve_working: bool,
    recovered_at: float,
    steps: Mapping[int, PlannedStep] | None = None,
) -> RunContext:
    """The shared context of a run on ``store`` (already recovered) and ``engine`` (opened).

    ``recovered_at``: when the store's recovery began (``recover_store``).
    """
    refuse_in_dry_run(f"run {run_id}")  # (a Pipeline plans without a context: dry_pipeline)
    unwritable = store.layout.unwritable()
    if unwritable is not None and not isinstance(store, ReadOnlyRootStore):
        store = ReadOnlyRootStore(store, unwritable)  # (one passed in: open_store does not wrap)
    if shares_root(engine) and isinstance(store, SharedStagingStore):
        # Its workers stage from other hosts: commits must read staged files, not list them.
        store.expect_shared_filesystem()
    provenance: dict[str, Any] = capture_provenance().to_dict()
    note_run(store.layout.root, run_id)  # for an attached `stemma run`'s progress
    return RunContext(
        store=store,
        backend=engine,
        monitor=RunMonitor(
            run_id=run_id, name=name, root=str(store.layout.root), backend=engine.name
        ),
        run_id=run_id,
        steps=dict(steps or {}),
        cache_policy=cache_policy,
        preserve_working=preserve_working,
        provenance=provenance,
        worker_slots=WorkerSlots(int(getattr(engine, "max_workers", 1))),
        max_workers=max_workers,
        recovered_at=recovered_at,
    )
