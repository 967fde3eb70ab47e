"""The function backends run: a pack of units in one worker, and what it reports back.

Module-level and importable by name, so a spawned worker (or a SLURM job) unpickles it by
reference. A unit's own failure comes back as an unsuccessful outcome with its staged failure
record; only a dead worker surfaces as an exception on the backend's future.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord
from stemma.core.pipeline.units import ExecutionUnit
from stemma.core.run_ids import new_attempt_id
from stemma.core.store import PipelineStore


@dataclass(frozen=True, kw_only=True)
class UnitOutcome:
    """What the orchestrator needs of one finished unit."""

    execution_run_id: str
    success: bool
    error: str | None
    bundle: Path | None
    """The staged bundle to commit (None only when even a failure could not be staged)."""
    outputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Per output role, the ids the unit produced or passed through."""

    @classmethod
    def crashed(
        cls, unit: ExecutionUnit, error: BaseException, store: PipelineStore
    ) -> UnitOutcome:
        """Stage the failure record of a unit whose worker died, and report it."""
        now = dt.datetime.now(dt.UTC)
        record = ExecutionRecord(
            execution_run_id=new_attempt_id(),
            execution_spec_id=unit.execution_spec_id,
            step_run_id=unit.step_run_id,
            step_spec_id=unit.step_spec_id,
            step_name=unit.step_name,
            step_number=unit.step_number,
            operation=unit.operation.name or "",
            version=unit.version,
            params=unit.operation.key_params(),
            overrides=unit.operation.overrides(),
            started_at=now,
            ended_at=now,
            worker=f"{socket.gethostname()}:{os.getpid()} (orchestrator, for a dead worker)",
            backend=unit.backend,
            success=False,
            error=f"{type(error).__name__}: {error}",
            inputs=unit.inputs(),
        )
        bundle: Path | None
        try:
            bundle = store.stage_execution(record)
        except Exception as stage_error:  # never lose the original cause to a second fault
            bundle = None
            message = f"{record.error}; staging its failure record also failed: {stage_error}"
            return cls(
                execution_run_id=record.execution_run_id, success=False, error=message, bundle=None
            )
        return cls(
            execution_run_id=record.execution_run_id,
            success=False,
            error=record.error,
            bundle=bundle,
        )


def run_units(units: Sequence[ExecutionUnit]) -> list[UnitOutcome]:
    """Run a pack of units one after another in this worker (``units_per_worker``)."""
    from stemma.core.pipeline.worker import open_pipeline_store, run_pack, run_unit

    if not units:
        return []
    try:  # once per pack: opening a store is not free
        store = open_pipeline_store(units[0].root)
    except Exception:  # run_unit tries again and reports the error per unit
        reports = [run_unit(unit) for unit in units]
    else:
        reports = run_pack(units, store)  # one staged bundle for the whole pack
    outcomes: list[UnitOutcome] = []
    for report in reports:
        outcomes.append(
            UnitOutcome(
                execution_run_id=report.execution_run_id,
                success=report.success,
                error=report.error,
                bundle=report.bundle,
                outputs=report.outputs,
            )
        )
    return outcomes
