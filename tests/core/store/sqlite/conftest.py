"""Execution records, step events and a fresh SQLite store, built straight from core's records."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stemma.core.execution_records import ExecutionRecord, LineageEdge, StepEvent
from stemma.core.operations.drafts import FinalizedArtifact, MetricDraft
from stemma.core.records import StepStatus
from stemma.core.store.sqlite import SqliteStore

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]
EventFactory = Callable[..., StepEvent]

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)


def metric(value: int, *, step: int = 1) -> FinalizedArtifact:
    """A small metric artifact whose id follows from ``value``."""
    return MetricDraft.draft({"value": value}, f"m{value}.json", step_number=step).finalize()


def record(
    artifacts: Sequence[FinalizedArtifact] = (),
    *,
    step_run_id: str = "run-1",
    key: str | None = None,
    inputs: Mapping[str, tuple[str, ...]] | None = None,
    outputs: Mapping[str, tuple[str, ...]] | None = None,
    edges: Sequence[LineageEdge] = (),
    success: bool = True,
    ended: dt.datetime = T0,
    step_number: int = 1,
    step_name: str = "score",
    execution_run_id: str | None = None,
) -> ExecutionRecord:
    """One unit of step ``score``; its outputs default to its artifacts under role ``out``."""
    ids = tuple(artifact.artifact_id for artifact in artifacts)
    return ExecutionRecord(
        execution_run_id=execution_run_id or uuid.uuid4().hex,
        execution_spec_id=key or uuid.uuid4().hex,
        step_run_id=step_run_id,
        step_spec_id="spec-" + step_run_id,
        step_name=step_name,
        step_number=step_number,
        operation="Score",
        version="v0",
        params={"threshold": 0.5},
        overrides={},
        started_at=ended - dt.timedelta(seconds=1),
        ended_at=ended,
        worker="localhost:1",
        backend="local",
        success=success,
        error=None if success else "Traceback: boom",
        inputs=dict(inputs or {}),
        outputs=dict(outputs if outputs is not None else {"out": ids}),
        artifacts=tuple(artifacts),
        edges=tuple(edges),
        metadata={"attempt": 1},
    )


def event(
    status: StepStatus,
    minutes: int = 0,
    *,
    run: str = "run-1",
    spec: str = "fp-1",
    name: str = "score",
    pipeline_run_id: str = "demo_20260101_120000_abcdef01",
    metadata: Mapping[str, Any] | None = None,
) -> StepEvent:
    """One step event of fingerprint ``spec``, ``minutes`` after T0."""
    return StepEvent(
        step_run_id=run,
        step_spec_id=spec,
        pipeline_run_id=pipeline_run_id,
        step_number=2,
        step_name=name,
        status=status,
        operation="Score",
        version="v0",
        params={"threshold": 0.5},
        backend="local",
        timestamp=T0 + dt.timedelta(minutes=minutes),
        dep_fingerprints=("fp-0",),
        output_roles=("out",),
        total_count=3,
        succeeded_count=3,
        duration_seconds=1.5,
        metadata=dict(metadata or {"inputs": {"data": ["fp-0", "out"]}}),
    )


@pytest.fixture
def make_record() -> RecordFactory:
    return record


@pytest.fixture
def make_metric() -> MetricFactory:
    return metric


@pytest.fixture
def make_event() -> EventFactory:
    return event


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    return SqliteStore(tmp_path / "root", staging_timeout=0)
