"""The outcomes a dead worker staged before it died, found in staging instead of reported.

A worker stages its pack as one bundle, then returns the bundle's path with its units'
outcomes. Killed between the two (the OOM killer, a node lost, a SLURM element cancelled), it
leaves a complete bundle the orchestrator never heard of. Recording its units as crashed then
gives each of them two execution rows (the crash record now, the bundle when the next start
recovers it) and fails a step whose work was done. So on a worker's death, and only then (it
reads the step's staging directory), the orchestrator looks for the pack's bundle by its
content (``StagedPackReader.staged_pack``) and takes what it holds as those units' outcomes,
to be committed with the step like any bundle a worker reported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from stemma.core.engine.worker.units import ExecutionUnit, unit_failure_log
from stemma.core.engine.worker.worker_entry import UnitOutcome
from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.staging.pack_reading import ANY_STEP_RUN, StagedPackReader

_SUMMARY_CHARS = 2000
"""As long as a worker's own one-line error (``LifecycleOutcome.summary``)."""


def staged_outcomes(
    store: object, pack: Sequence[ExecutionUnit], *, adopted: bool = False
) -> dict[int, UnitOutcome]:
    """Per position in ``pack``, the outcome of a unit its dead worker staged before dying.

    ``adopted``: the worker was a dead run's element this run adopted; it staged the units
    under that run's step run, so they are looked for by execution key alone.

    Empty when the store cannot look (it is not a ``StagedPackReader``) or nothing of the pack
    was staged; a failure to look is not the pack's failure: its units are then recorded as
    crashed, and the bundle is committed by the next start's recovery, as before. A failed
    unit found gets the failure log its worker would have written once it had staged it.
    """
    found = _staged(store, pack, adopted)
    outcomes: dict[int, UnitOutcome] = {}
    for position, (bundle, record) in found.items():
        if not record.success:
            _failure_log(pack[position], record)
        outcomes[position] = _outcome(bundle, record)
    return outcomes


def _staged(
    store: object, pack: Sequence[ExecutionUnit], adopted: bool
) -> dict[int, tuple[Path, ExecutionRecord]]:
    if not pack or not isinstance(store, StagedPackReader):
        return {}
    first = pack[0]  # a pack (even of several function steps) is staged under its first unit
    keys = [
        (ANY_STEP_RUN if adopted else unit.step_run_id, unit.execution_spec_id) for unit in pack
    ]
    try:
        found = store.staged_pack(first.step_number, first.step_name, keys)
    except Exception:  # looking is best effort: crash records lose nothing
        return {}
    return {position: found[key] for position, key in enumerate(keys) if key in found}


def _outcome(bundle: Path, record: ExecutionRecord) -> UnitOutcome:
    """What the worker would have reported for ``record`` (its reply is not staged)."""
    return UnitOutcome(
        execution_run_id=record.execution_run_id,
        success=record.success,
        error=None if record.success else _summary(record.error),
        bundle=bundle,
        outputs=record.outputs,
        seconds=max(0.0, (record.ended_at - record.started_at).total_seconds()),
    )


def _failure_log(unit: ExecutionUnit, record: ExecutionRecord) -> None:
    with contextlib.suppress(Exception):  # best effort, as the worker's own
        unit_failure_log(unit, record)


def _summary(error: str | None) -> str:
    """The last line of a staged traceback (``ValueError: …``): the one-line error."""
    lines = [line for line in (error or "").splitlines() if line.strip()]
    return (lines[-1].strip() if lines else "the execution failed")[:_SUMMARY_CHARS]
