"""A run's history with fixed ids, times and workers, written through the store's own API.

A real pipeline's history names fresh ids, the clock and ``host:pid`` workers, so a screen that
shows them (the step screen) would differ on every test run. These records are what the
orchestrator and its workers would have committed for one run, with every such value fixed:
``record_events`` for the step events, ``stage_executions`` and ``commit_wave`` for the
executions and the step's outputs, as a pipeline commits them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord, StepEvent, StepOutputs
from stemma.core.records import StepStatus
from stemma.storage import DeltaStore

EXECUTED = 30
"""Executions of the copy step: the first :data:`FAILED` of them failed."""
FAILED = 3
PARAMS = {"delay": 0.5, "suffix": "_copy"}


def write_fixed_history(root: Path, run_id: str, start: dt.datetime) -> None:
    """History of ``run_id``: generate (one unit), then slow_copy (30 units, 3 failed)."""
    store = DeltaStore(root)
    generate = _events(run_id, 0, "example.generate", start, executed=1, failed=0)
    copy_start = start + dt.timedelta(seconds=4)
    copy = _events(run_id, 1, "example.slow_copy", copy_start, EXECUTED)
    store.record_events([generate[0], copy[0]])
    records = [_execution(copy[1], index, copy_start) for index in range(EXECUTED)]
    outputs = StepOutputs(
        step_run_id=copy[1].step_run_id,
        outputs={"copies": tuple(f"{index:02d}" + "c0ffee" * 5 for index in range(27))},
    )
    store.commit_wave([store.stage_executions(records)], step_outputs=outputs)
    store.record_events([generate[1], copy[1]])


def _events(
    run_id: str,
    number: int,
    name: str,
    at: dt.datetime,
    executed: int,
    failed: int = FAILED,
) -> tuple[StepEvent, StepEvent]:
    """The step's ``running`` event and its final one, 91 s later."""
    running = StepEvent(
        step_run_id=f"{number}" * 32,
        step_spec_id=f"{number}a" * 16,
        pipeline_run_id=run_id,
        step_number=number,
        step_name=name,
        status=StepStatus.RUNNING,
        operation=name,
        version="v1",
        params={"overrides": {"environment": {}, "tool": {}}, "params": PARAMS},
        backend="slurm",
        timestamp=at,
        dep_fingerprints=("0a" * 16,) if number else (),
        output_roles=("copies",) if number else ("datasets",),
    )
    done = replace(
        running,
        status=StepStatus.COMPLETED,
        timestamp=at + dt.timedelta(seconds=91),
        total_count=executed,
        succeeded_count=executed - failed,
        failed_count=failed,
        duration_seconds=91.0,
    )
    return running, done


def _execution(step: StepEvent, index: int, at: dt.datetime) -> ExecutionRecord:
    """Unit ``index`` of the step: each started 3 s after the last and took 2.5 s."""
    started = at + dt.timedelta(seconds=3 * index)
    failed = index < FAILED
    return ExecutionRecord(
        execution_run_id=f"e{index:03d}" + "5eed" * 7,
        execution_spec_id=f"k{index:03d}" + "5eed" * 7,
        step_run_id=step.step_run_id,
        step_spec_id=step.step_spec_id,
        step_name=step.step_name,
        step_number=step.step_number,
        operation=step.operation,
        version=step.version,
        params=PARAMS,
        overrides={"environment": {}, "tool": {}},
        started_at=started,
        ended_at=started + dt.timedelta(seconds=2.5),
        worker=f"node-{'ab'[index % 2]}:{4200 + index % 4}",
        backend="slurm",
        success=not failed,
        error=f"TypeError: part_{index}.csv: list[int] expected\n(traceback)" if failed else None,
    )
