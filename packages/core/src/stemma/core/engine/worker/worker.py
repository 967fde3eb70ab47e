"""What a worker process runs for one unit: load inputs, run the lifecycle, stage one bundle.

:func:`run_unit` is module-level so a spawned worker unpickles it by reference. It never raises
for anything the unit does: a failure is staged as a failure record (and written as a failure
log), and if even that cannot be staged, the returned report says so with both errors.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stemma.core.backends import worker_stop
from stemma.core.backends.base import WorkerCrashedError
from stemma.core.backends.memory_at_death import MEMORY_KEY, MemoryAtDeath
from stemma.core.engine.worker.composite_runner import run_composite
from stemma.core.engine.worker.creator_lifecycle import (
    LifecycleOutcome,
    failure_outcome,
    run_creator,
)
from stemma.core.engine.worker.curator_lifecycle import run_curator
from stemma.core.engine.worker.fail_fast_marks import failed_fast, mark_failed_fast
from stemma.core.engine.worker.function_lifecycle import keep_in_store, run_function
from stemma.core.engine.worker.input_loading import Associated, Inputs, load_inputs, load_pack
from stemma.core.engine.worker.spare_sandboxes import reused_sandboxes
from stemma.core.engine.worker.units import ExecutionUnit, unit_failure_log
from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.kinds import OperationKind
from stemma.core.run_ids import new_attempt_id
from stemma.core.store.protocols import WorkerStore
from stemma.core.store.worker_store import open_worker_store


@dataclass(frozen=True, kw_only=True)
class UnitReport:
    """What a worker sends back for one unit: small, no artifact content."""

    execution_run_id: str
    execution_spec_id: str
    step_number: int
    success: bool
    bundle: Path | None
    """The staged bundle; None only when nothing could be staged (see ``error``)."""
    error: str | None = None
    """One line (or two folded into one, after a double fault) saying what went wrong."""
    outputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Per output role, the ids the unit produced or passed through."""
    artifact_count: int = 0
    """New artifacts staged."""
    edge_count: int = 0
    """Lineage edges staged."""
    failure_log: Path | None = None
    """The human-readable failure log, when one was written."""
    reply: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The lifecycle's reply to the orchestrator (see ``LifecycleOutcome.reply``)."""
    seconds: float = 0.0
    """How long the unit's lifecycle ran (its pack's input read and staging not counted: they
    are per pack); 0 for a unit that never ran."""

    @property
    def output_count(self) -> int:
        """How many output ids the unit reported, over every role."""
        return sum(len(ids) for ids in self.outputs.values())


def run_unit(unit: ExecutionUnit, store: WorkerStore | None = None) -> UnitReport:
    """Run one unit and stage its execution record; never raises for the unit's failures.

    Args:
        unit: the sealed unit of work.
        store: the store to load from and stage into; opened from ``unit.root`` when None.

    Returns:
        The report: the bundle to commit, success, a one-line error and counts.
    """
    run_id = new_attempt_id()
    started = dt.datetime.now(dt.UTC)
    if store is None:
        try:
            store = open_worker_store(unit.root, kind=unit.store_kind)
        except Exception as err:
            outcome = failure_outcome(err, None, prefix="could not open the store: ")
            return _unstaged(unit, _record(unit, run_id, started, outcome), outcome, None)
    outcome, seconds = _timed(unit, store, run_id)
    return _stage(store, unit, _record(unit, run_id, started, outcome), outcome, seconds)


def run_pack(units: Sequence[ExecutionUnit], store: WorkerStore) -> list[UnitReport]:
    """Run a worker's pack of units and stage them as one bundle; never raises for the units.

    Under ``fail_fast`` the pack ends at a failed unit (or once another worker's unit of the
    step failed): the reports cover only the units that ran, the first ones in order.

    If the pack cannot be staged whole, each unit is staged on its own (with the single-unit
    double-fault handling), so one unit's unstageable output never loses the others.
    """
    done: list[tuple[ExecutionUnit, ExecutionRecord, LifecycleOutcome, float]] = []
    with reused_sandboxes():
        loads = load_pack(units, store)  # inputs read for many units at once
        for unit in units:
            if failed_fast(unit):  # under fail_fast a unit of the step failed: start no more
                break  # (the caller reports the rest as not started, nothing of them staged)
            run_id = new_attempt_id()
            started = dt.datetime.now(dt.UTC)
            stopped = worker_stop.stop_reason()  # told to stop: load and run no more
            if stopped is None:
                _, loaded = next(loads)  # (the pack's read: not the unit's own time)
                outcome, seconds = _timed(unit, store, run_id, loaded)
            else:
                outcome, seconds = _not_started(stopped), 0.0
            done.append((unit, _record(unit, run_id, started, outcome), outcome, seconds))
            if not outcome.success and unit.fail_fast_file is not None:
                mark_failed_fast(unit)
        # Staged before the last sandbox goes: a unit never drops out of the dashboard's view.
        try:
            bundle = store.stage_executions([record for _, record, _, _ in done])
        except Exception:
            return [_stage(store, *unit_done) for unit_done in done]
    return [_report(unit, record, outcome, bundle, secs) for unit, record, outcome, secs in done]


def report_outcome(
    unit: ExecutionUnit, outcome: LifecycleOutcome, started: dt.datetime, store: WorkerStore
) -> UnitReport:
    """Stage an outcome made outside a worker (an external runner's), by the same rules."""
    return _stage(store, unit, _record(unit, new_attempt_id(), started, outcome), outcome)


def report_crash(unit: ExecutionUnit, error: BaseException, store: WorkerStore) -> UnitReport:
    """Record a unit whose worker died: called by the orchestrator, same record and log rules.

    A worker judged killed for memory (``WorkerCrashedError.memory``) leaves its peak and its
    host's memory in the record's ``metadata.memory`` and, written out, in its error text (so
    in its failure log); its one-line error says them in words.
    """
    outcome = failure_outcome(error, None, prefix="the worker died: ")
    memory = error.memory if isinstance(error, WorkerCrashedError) else None
    if memory is not None:
        facts = MemoryAtDeath(**memory)
        outcome = replace(
            outcome,
            error=f"{(outcome.error or '').rstrip()}\n\n{facts.block()}\n",
            metadata={**outcome.metadata, MEMORY_KEY: facts.as_metadata()},
        )
    record = _record(unit, new_attempt_id(), dt.datetime.now(dt.UTC), outcome)
    return _stage(store, unit, record, outcome)


def _timed(
    unit: ExecutionUnit,
    store: WorkerStore,
    run_id: str,
    loaded: tuple[Inputs, Associated] | Exception | None = None,
) -> tuple[LifecycleOutcome, float]:
    """:func:`_execute`, and how long it took: the unit's own seconds (``UnitReport.seconds``)."""
    began = time.monotonic()
    outcome = _execute(unit, store, run_id, loaded)
    return outcome, time.monotonic() - began


def _execute(
    unit: ExecutionUnit,
    store: WorkerStore,
    run_id: str,
    loaded: tuple[Inputs, Associated] | Exception | None = None,
) -> LifecycleOutcome:
    if unit.operation.kind is OperationKind.FUNCTION:
        # its inputs are its deps' outputs, on disk: nothing to load
        return keep_in_store(unit, store, run_function(unit, store))
    if loaded is None:
        try:
            loaded = load_inputs(unit, store)
        except Exception as err:
            loaded = err
    if isinstance(loaded, Exception):
        return failure_outcome(loaded, None, prefix="could not load the inputs: ")
    inputs, associated = loaded
    stopped = worker_stop.stop_reason()  # told to stop (a time limit): start no more units
    if stopped is not None:
        return _not_started(stopped)
    try:
        with worker_stop.interruptible():
            worker_stop.check()  # a stop that came since the line above
            if unit.operation.is_curator():
                return run_curator(unit, inputs, store, associated=associated)
            if unit.operation.kind is OperationKind.COMPOSITE:
                return run_composite(unit, inputs, load=store.load_artifacts)
            return run_creator(
                unit, inputs, run_id=run_id, load=store.load_artifacts, associated=associated
            )
    except Exception as err:  # the lifecycles catch their own; this guards against their bugs
        return failure_outcome(err, None, prefix="the worker failed: ")
    except worker_stop.WorkerStopping as err:  # the time limit came while the unit ran
        return failure_outcome(err, None)


def _not_started(reason: str) -> LifecycleOutcome:
    return failure_outcome(worker_stop.WorkerStopping(f"not started: {reason}"), None)


def _record(
    unit: ExecutionUnit, run_id: str, started: dt.datetime, outcome: LifecycleOutcome
) -> ExecutionRecord:
    op = unit.operation
    try:
        params, overrides = op.key_params(), op.overrides()
    except Exception:  # already checked when the step was keyed; never lose the record to it
        params, overrides = {}, {}
    return ExecutionRecord(
        execution_run_id=run_id,
        execution_spec_id=unit.execution_spec_id,
        step_run_id=unit.step_run_id,
        step_spec_id=unit.step_spec_id,
        step_name=unit.step_name,
        step_number=unit.step_number,
        operation=op.label(),
        version=unit.version,
        params=params,
        overrides=overrides,
        started_at=started,
        ended_at=dt.datetime.now(dt.UTC),
        worker=f"{socket.gethostname()}:{os.getpid()}",
        backend=unit.backend,
        success=outcome.success,
        error=outcome.error,
        tool_output=outcome.tool_output,
        inputs=unit.inputs(),
        outputs=outcome.outputs if outcome.success else {},
        artifacts=outcome.artifacts if outcome.success else (),
        edges=outcome.edges if outcome.success else (),
        metadata=outcome.metadata,
        provenance=unit.provenance,
    )


def _stage(
    store: WorkerStore,
    unit: ExecutionUnit,
    record: ExecutionRecord,
    outcome: LifecycleOutcome,
    seconds: float = 0.0,
) -> UnitReport:
    try:
        bundle = store.stage_execution(record)
    except Exception as err:
        if record.success:  # the work is lost; stage why, as a failure record
            failed = failure_outcome(
                err, outcome.tool_output, prefix="staging the execution failed: "
            )
            return _stage(store, unit, _failed_record(record, failed), failed)
        return _unstaged(unit, record, outcome, err)
    return _report(unit, record, outcome, bundle, seconds)


def _report(
    unit: ExecutionUnit,
    record: ExecutionRecord,
    outcome: LifecycleOutcome,
    bundle: Path,
    seconds: float = 0.0,
) -> UnitReport:
    log = None if record.success else unit_failure_log(unit, record)
    return UnitReport(
        execution_run_id=record.execution_run_id,
        execution_spec_id=unit.execution_spec_id,
        step_number=unit.step_number,
        success=record.success,
        bundle=bundle,
        error=outcome.summary,
        outputs=record.outputs,
        artifact_count=len(record.artifacts),
        edge_count=len(record.edges),
        failure_log=log,
        reply=outcome.reply,
        seconds=seconds,
    )


def _failed_record(record: ExecutionRecord, outcome: LifecycleOutcome) -> ExecutionRecord:
    return replace(record, success=False, error=outcome.error, outputs={}, artifacts=(), edges=())


def _unstaged(
    unit: ExecutionUnit,
    record: ExecutionRecord,
    outcome: LifecycleOutcome,
    staging_error: Exception | None,
) -> UnitReport:
    """The report of a failure nothing could be staged for: the double fault folded in."""
    summary = outcome.summary or "the execution failed"
    if staging_error is not None:
        summary = (
            f"{summary}; staging its failure record also failed: "
            f"{type(staging_error).__name__}: {staging_error}"
        )
        details = "".join(traceback.format_exception(staging_error))
        record = _failed_record(
            record,
            LifecycleOutcome(
                success=False,
                error=f"{record.error}\nStaging the failure record failed too:\n{details}",
            ),
        )
    return UnitReport(
        execution_run_id=record.execution_run_id,
        execution_spec_id=unit.execution_spec_id,
        step_number=unit.step_number,
        success=False,
        bundle=None,
        error=summary,
        failure_log=unit_failure_log(unit, record),
    )
