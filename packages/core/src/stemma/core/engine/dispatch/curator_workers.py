"""Curators run beside the orchestrator: in a fresh spawn subprocess on its host, on any backend.

A curator (Filter, Merge…) reads a frame of metadata and decides which artifacts go on; it needs
no sandbox and no cluster. Sending it to the run's backend made every curator on SLURM wait in
the queue as a job of its own, and on the local pool run inside a long-lived worker whose memory
is never returned. As the seed does, a curator step's units go to a pool of one spawned process
that lives as long as the step (:func:`curator_workers`): the operating system takes back all
its memory when the step ends, and a curator the OOM killer takes is a failure record with its
worker's peak memory and its host's memory then (``metadata.memory``), not a crashed
orchestrator. Each unit is its own pack, so one unit's death
fails only that unit. The curator lifecycle records its process's peak memory
(``metadata.peak_rss_mb``).

Under ``local-thread`` (asked for so that nothing is pickled) a curator runs in a thread, like
everything else of that run.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from stemma.core.backends.base import IN_PROCESS_BACKENDS, Backend
from stemma.core.backends.local import LocalBackend
from stemma.core.cancel_levels import CancelLevel
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.run_context import RunContext
from stemma.core.operations.kinds import OperationKind


@contextmanager
def curator_workers(ctx: RunContext, step: PlannedStep) -> Generator[Backend]:
    """The backend ``step``'s units run on: the run's, or, for a curator, its own subprocess."""
    if step.operation.kind is not OperationKind.CURATOR or ctx.backend.name in IN_PROCESS_BACKENDS:
        yield ctx.backend
        return
    # Its worker runs the main script again only when the curator's class is defined there.
    defined_in_main = type(step.operation).__module__ == "__main__"
    backend = LocalBackend(max_workers=1, start_method="spawn", import_main=defined_in_main)
    ctx.side_backends.append(backend)  # so that a cancel reaches it (ctx.cancel_workers)
    try:
        yield backend
    finally:
        ctx.side_backends.remove(backend)
        if ctx.cancel_level >= CancelLevel.FORCE:
            backend.cancel(CancelLevel(ctx.cancel_level))
        backend.shutdown(cancel_pending=ctx.cancelled.is_set())
