"""Committing the raw files given to a curator as file-ref artifacts, before its units run.

``FileInputs`` are files on disk, not artifacts of an earlier step (finalized, their content
hashed, when the step was submitted). The orchestrator commits them as artifacts of an
execution of its own (``promote_files``), so the step's workers load them like any other input
and their lineage starts at the step that was given them.
"""

from __future__ import annotations

import datetime as dt

from stemma.core.engine.planned_step import FileInputs, PlannedStep
from stemma.core.engine.run_context import RunContext
from stemma.core.execution_records import ExecutionRecord
from stemma.core.run_ids import new_attempt_id


def promote_files(ctx: RunContext, step: PlannedStep, step_run_id: str) -> None:
    """Commit raw file inputs as file-ref artifacts, so workers load them like any other."""
    for role, given in step.inputs.items():
        if not isinstance(given, FileInputs):
            continue
        now = dt.datetime.now(dt.UTC)
        record = ExecutionRecord(
            execution_run_id=new_attempt_id(),
            execution_spec_id=new_attempt_id(),
            step_run_id=step_run_id,
            step_spec_id=step.fingerprint or "",
            step_name=step.name,
            step_number=step.number,
            operation="promote_files",
            version="v0",
            params={},
            overrides={},
            started_at=now,
            ended_at=now,
            worker="orchestrator",
            backend="orchestrator",
            success=True,
            outputs={role: given.ids()},
            artifacts=given.artifacts,
            metadata={"promoted_for": role},
        )
        with ctx.commit_lock:
            ctx.store.commit_wave([ctx.store.stage_execution(record)])
