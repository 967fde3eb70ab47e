"""A scheduler's log of a finished worker, kept with the executions it ran.

Backends that run workers as scheduler jobs (SLURM) return futures with a ``worker_log()``
method: the tails of the job's stdout and stderr. Once a pack's future settles, its log is
noted beside each staged bundle of the pack, so the wave commit fills ``executions.worker_log``
of those executions, and appended to the failure log of each unit that failed. A local pool's
futures have no such method: a local worker's output is the unit's captured ``tool_output``.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from contextlib import suppress
from pathlib import Path
from typing import Any

from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.engine.worker.worker_entry import UnitOutcome
from stemma.core.store.failure_logs import append_worker_log, failure_log_path
from stemma.core.store.protocols import RunStore


def worker_log_of(future: Future[Any]) -> str | None:
    """The scheduler's log of the future's worker, or None when the backend keeps none."""
    read = getattr(future, "worker_log", None)
    if not callable(read):
        return None
    with suppress(OSError):
        log = read()
        return log if isinstance(log, str) and log else None
    return None


def keep_worker_log(
    store: RunStore,
    pack: Sequence[ExecutionUnit],
    outcomes: Sequence[UnitOutcome],
    log: str,
) -> None:
    """Note ``log`` beside the pack's staged bundles and in its failed units' failure logs.

    Best effort: a bundle committed meanwhile (by a recovery) or an unwritable log loses only
    this diagnosis aid, never a result.
    """
    by_bundle: dict[Path, list[str]] = {}
    for outcome in outcomes:
        if outcome.bundle is not None and outcome.execution_run_id:
            by_bundle.setdefault(outcome.bundle, []).append(outcome.execution_run_id)
    for bundle, execution_run_ids in by_bundle.items():
        with suppress(OSError):
            store.note_worker_log(bundle, execution_run_ids, log)
    for unit, outcome in zip(pack, outcomes, strict=False):  # (several steps' function units)
        if outcome.success or outcome.cancelled or not outcome.execution_run_id:
            continue
        op_name = unit.operation.name or type(unit.operation).__name__  # as the worker names it
        path = failure_log_path(
            Path(unit.root), unit.step_number, op_name, outcome.execution_run_id
        )
        if path.is_file():
            append_worker_log(path, log)
