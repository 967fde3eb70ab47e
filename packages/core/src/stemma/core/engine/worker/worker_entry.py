"""The function backends run: a pack of units in one worker, and what it reports back.

Module-level and importable by name, so a spawned worker (or a SLURM job) unpickles it by
reference. A unit's own failure comes back as an unsuccessful outcome with its staged failure
record; only a dead worker surfaces as an exception on the backend's future.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.backends import worker_stop
from stemma.core.engine.worker.fail_fast_marks import NOT_STARTED
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.store.protocols import WorkerStore

if TYPE_CHECKING:
    from stemma.core.engine.worker.worker import UnitReport


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
    reply: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The lifecycle's reply (a function step's return value); never committed."""
    cancelled: bool = False
    """The unit was stopped by a cancellation (its worker terminated): not a failure, and
    nothing of it is committed; a rerun runs it again."""
    seconds: float = 0.0
    """How long the unit's lifecycle ran in its worker (0 when it never ran): what sizes a
    later run's SLURM array elements (``stemma.core.engine.dispatch.wave_sizing``)."""

    def __reduce__(self) -> tuple[Any, ...]:
        # A worker sends back one outcome per unit: an empty ``outputs`` or ``reply`` travels
        # as None and comes back as one shared empty mapping, not a new dict per unit (with
        # 10^5 units, megabytes of the orchestrator's peak).
        return (
            _outcome,
            (
                self.execution_run_id,
                self.success,
                self.error,
                self.bundle,
                self.outputs or None,
                self.reply or None,
                self.cancelled,
                self.seconds,
            ),
        )

    @classmethod
    def of(cls, report: UnitReport) -> UnitOutcome:
        """The orchestrator's view of a worker's report."""
        return cls(
            execution_run_id=report.execution_run_id,
            success=report.success,
            error=report.error,
            bundle=report.bundle,
            outputs=report.outputs,
            reply=report.reply,
            seconds=report.seconds,
        )

    @classmethod
    def crashed(cls, unit: ExecutionUnit, error: BaseException, store: WorkerStore) -> UnitOutcome:
        """Stage the failure record of a unit whose worker died, and report it."""
        from stemma.core.engine.worker.worker import report_crash

        return cls.of(report_crash(unit, error, store))

    @classmethod
    def not_started(cls, reason: str) -> UnitOutcome:
        """A unit its worker did not start (``fail_fast``): cancelled, nothing recorded."""
        return cls._cancelled(f"not started: {reason}")

    @classmethod
    def stopped(cls, level: int) -> UnitOutcome:
        """A unit whose worker a cancellation terminated: recorded in the step's counts only."""
        return cls._cancelled(f"cancelled (level {level})")

    @classmethod
    def _cancelled(cls, why: str) -> UnitOutcome:
        return cls(execution_run_id="", success=False, error=why, bundle=None, cancelled=True)


_EMPTY: Mapping[str, Any] = {}
"""Shared by every outcome with nothing in a field (never written to)."""


def _outcome(
    execution_run_id: str,
    success: bool,
    error: str | None,
    bundle: Path | None,
    outputs: Mapping[str, tuple[str, ...]] | None,
    reply: Mapping[str, Any] | None,
    cancelled: bool,
    seconds: float = 0.0,  # (absent from an outcome an older worker pickled)
) -> UnitOutcome:
    """Rebuild an outcome a worker sent (``UnitOutcome.__reduce__``)."""
    return UnitOutcome(
        execution_run_id=execution_run_id,
        success=success,
        error=error,
        bundle=bundle,
        outputs=outputs or _EMPTY,
        reply=reply or _EMPTY,
        cancelled=cancelled,
        seconds=seconds,
    )


def run_units(units: Sequence[ExecutionUnit]) -> list[UnitOutcome]:
    """Run a pack of units one after another in this worker (``units_per_worker``)."""
    from stemma.core.engine.worker.worker import run_pack, run_unit
    from stemma.core.store.worker_store import open_worker_store

    if not units:
        return []
    try:
        try:  # once per pack: opening a store is not free
            store = open_worker_store(units[0].root, kind=units[0].store_kind)
        except Exception:  # run_unit tries again and reports the error per unit
            reports = [run_unit(unit) for unit in units]
        else:
            reports = run_pack(units, store)  # one staged bundle for the whole pack
    finally:
        worker_stop.clear()  # a pool worker runs its next pack afresh
    outcomes = [UnitOutcome.of(report) for report in reports]
    # A pack ended early under fail_fast: its other units never started.
    return outcomes + [UnitOutcome.not_started(NOT_STARTED) for _ in units[len(reports) :]]
