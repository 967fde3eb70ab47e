"""Outcomes and execution records built straight from the core records, and a fresh store."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stemma.core.canonical import canonical_json
from stemma.core.execution_records import ExecutionRecord, LineageEdge
from stemma.core.identity import TreeDigest, content_id, file_ref_artifact_id, hash_canonical
from stemma.core.operations.drafts import FinalizedArtifact, MetricDraft
from stemma.core.records import (
    OutputRecord,
    Provenance,
    StepIdentity,
    StepOutcome,
    StepStarted,
)
from stemma.storage import DeltaStore, TableSpec

StartedFactory = Callable[..., StepStarted]
OutcomeFactory = Callable[..., StepOutcome]
RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]

_T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)
_PROVENANCE = Provenance(
    git_commit=None, user="tester", host="localhost", created_at=_T0, command_line=("pytest",)
)


def _new_id() -> str:
    return uuid.uuid4().hex


def build_started(
    name: str = "train",
    *,
    config: Mapping[str, Any] | None = None,
    run_id: str = "demo_20260101_120000_abcdef01",
    at: dt.datetime = _T0,
) -> StepStarted:
    """A ``running`` event; the fingerprint follows from the name and config."""
    step_config = dict(config if config is not None else {"lr": 0.1})
    return StepStarted(
        step=StepIdentity(
            fingerprint=hash_canonical({"name": name, "config": step_config}),
            name=name,
            version="v1",
            config=step_config,
            dep_fingerprints=(),
        ),
        step_run_id=_new_id(),
        run_id=run_id,
        step_number=0,
        backend="local-thread",
        timestamp=at,
    )


def build_outcome(
    started: StepStarted | None = None,
    *,
    value: Any = None,
    error: str | None = None,
    inputs: Mapping[str, tuple[str, ...]] | None = None,
    output_artifact_id: str | None = None,
    seconds: float = 2.0,
) -> StepOutcome:
    """A finished execution of ``started``: successful unless ``error`` is given."""
    event = started if started is not None else build_started()
    output: OutputRecord | None = None
    value_json: str | None = None
    value_id: str | None = None
    if error is None:
        relative = f"outputs/{event.step.name}/v1-{event.step.fingerprint[:16]}"
        digest = TreeDigest(content_hash=content_id(relative.encode()), size=10, file_count=1)
        output = OutputRecord(
            relative_path=relative,
            artifact_id=output_artifact_id or file_ref_artifact_id(digest, relative),
            content_hash=digest.content_hash,
            size=digest.size,
            file_count=digest.file_count,
        )
        value_json = canonical_json(value if value is not None else {"loss": 0.5})
        value_id = content_id(value_json.encode())
    return StepOutcome(
        started=event,
        execution_run_id=_new_id(),
        execution_spec_id=hash_canonical({"step": event.step.fingerprint, "inputs": inputs}),
        worker="localhost:1",
        ended_at=event.timestamp + dt.timedelta(seconds=seconds),
        error=error,
        output=output,
        value_json=value_json,
        value_artifact_id=value_id,
        input_artifact_ids=dict(inputs or {}),
        provenance=_PROVENANCE,
    )


_T0_PIPE = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)


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
    ended: dt.datetime = _T0_PIPE,
    step_number: int = 1,
    execution_run_id: str | None = None,
) -> ExecutionRecord:
    """One unit of step ``score``; its outputs default to its artifacts under role ``out``."""
    ids = tuple(artifact.artifact_id for artifact in artifacts)
    return ExecutionRecord(
        execution_run_id=execution_run_id or uuid.uuid4().hex,
        execution_spec_id=key or uuid.uuid4().hex,
        step_run_id=step_run_id,
        step_spec_id="spec-" + step_run_id,
        step_name="score",
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


@pytest.fixture
def make_started() -> StartedFactory:
    return build_started


@pytest.fixture
def make_outcome() -> OutcomeFactory:
    return build_outcome


@pytest.fixture
def make_record() -> RecordFactory:
    return record


@pytest.fixture
def make_metric() -> MetricFactory:
    return metric


@pytest.fixture
def store(tmp_path: Path) -> DeltaStore:
    return DeltaStore(tmp_path / "root")


def delta_transactions(store: DeltaStore, spec: TableSpec) -> list[str]:
    """The application transaction ids in a table's Delta log, in commit order."""
    found: list[str] = []
    for file in sorted((spec.path(store.layout.delta) / "_delta_log").glob("*.json")):
        for line in file.read_text().splitlines():
            action: dict[str, Any] = json.loads(line)
            if "txn" in action:
                found.append(str(action["txn"]["appId"]))
    return found
