"""Function steps and execution records built straight from the core records, and a fresh store."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from deltalake import DeltaTable

from stemma.core.canonical import canonical_json
from stemma.core.execution_records import ExecutionRecord, LineageEdge, StepEvent, StepOutputs
from stemma.core.identity import TreeDigest, content_id, file_ref_artifact_id, hash_canonical
from stemma.core.operations.drafts import FinalizedArtifact, MetricDraft
from stemma.core.records import Provenance, StepStatus
from stemma.storage import DeltaStore, TableSpec, WaveReport
from stemma.storage.schemas import ARTIFACT_INDEX

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]

_T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)
_PROVENANCE = Provenance(
    git_commit=None, user="tester", host="localhost", created_at=_T0, command_line=("pytest",)
)
OUTPUT_ROLE = "output"
VALUE_ROLE = "value"


def _new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, kw_only=True)
class FunctionStep:
    """One attempt of a lazy function step, in the records the engine hands a store.

    Its one unit's execution (``OUT`` as a ``file_ref`` artifact and the return value as a
    ``metric``, every input a parent of both), and the attempt's ``running`` and final events.
    """

    execution: ExecutionRecord
    running: StepEvent
    final: StepEvent

    @property
    def fingerprint(self) -> str:
        """The step key (``step_spec_id``)."""
        return self.execution.step_spec_id

    @property
    def step_run_id(self) -> str:
        """The attempt."""
        return self.execution.step_run_id

    @property
    def execution_run_id(self) -> str:
        """The attempt's one unit."""
        return self.execution.execution_run_id

    @property
    def output(self) -> FinalizedArtifact:
        """The ``OUT`` file ref (a successful attempt only)."""
        return self._made("file_ref")

    @property
    def value(self) -> FinalizedArtifact:
        """The return value (a successful attempt only)."""
        return self._made("metric")

    @property
    def output_path(self) -> str:
        """Where ``OUT`` is, relative to the root."""
        return str(self.output.fields["path"])

    @property
    def step_outputs(self) -> StepOutputs:
        """What the attempt offers downstream, per role (nothing when it failed)."""
        return StepOutputs(
            step_run_id=self.step_run_id,
            outputs={
                role: tuple(sorted(self.execution.outputs.get(role, ())))
                for role in (OUTPUT_ROLE, VALUE_ROLE)
            },
        )

    def _made(self, artifact_type: str) -> FinalizedArtifact:
        (found,) = [a for a in self.execution.artifacts if a.artifact_type == artifact_type]
        return found


FunctionStepFactory = Callable[..., FunctionStep]


def build_function_step(
    name: str = "train",
    *,
    config: Mapping[str, Any] | None = None,
    value: Any = None,
    error: str | None = None,
    inputs: Mapping[str, tuple[str, ...]] | None = None,
    output_artifact_id: str | None = None,
    seconds: float = 2.0,
    at: dt.datetime = _T0,
    run_id: str = "demo_20260101_120000_abcdef01",
) -> FunctionStep:
    """An attempt of step ``name``, started ``at``: successful unless ``error`` is given.

    The fingerprint follows from the name and config, the output's id from the fingerprint (its
    path) unless ``output_artifact_id`` is given, and the value's id from ``value``.
    """
    step_config = dict(config if config is not None else {"lr": 0.1})
    fingerprint = hash_canonical({"name": name, "config": step_config})
    given = dict(inputs or {})
    step_run_id = _new_id()
    ended = at + dt.timedelta(seconds=seconds)
    made: tuple[FinalizedArtifact, ...] = ()
    if error is None:
        relative = f"outputs/{name}/v1-{fingerprint[:16]}"
        digest = TreeDigest(content_hash=content_id(relative.encode()), size=10, file_count=1)
        output = FinalizedArtifact(
            artifact_id=output_artifact_id or file_ref_artifact_id(digest, relative),
            artifact_type="file_ref",
            content=None,
            original_name=relative.rsplit("/", 1)[-1],
            extension="",
            size=digest.size,
            fields={
                "path": relative,
                "content_hash": digest.content_hash,
                "file_count": digest.file_count,
            },
            metadata={},
            origin_step=None,
        )
        data = canonical_json(value if value is not None else {"loss": 0.5}).encode()
        returned = FinalizedArtifact(
            artifact_id=content_id(data),
            artifact_type="metric",
            content=data,
            original_name="value.json",
            extension=".json",
            size=len(data),
            fields={},
            metadata={},
            origin_step=None,
        )
        made = (output, returned)
    roles = dict(zip((OUTPUT_ROLE, VALUE_ROLE), made, strict=False))
    execution = ExecutionRecord(
        execution_run_id=_new_id(),
        execution_spec_id=hash_canonical({"step": fingerprint, "inputs": given}),
        step_run_id=step_run_id,
        step_spec_id=fingerprint,
        step_name=name,
        step_number=1,
        operation=name,
        version="v1",
        params=step_config,
        overrides={},
        started_at=at,
        ended_at=ended,
        worker="localhost:1",
        backend="local-thread",
        success=error is None,
        error=error,
        inputs=given,
        outputs={role: (artifact.artifact_id,) for role, artifact in roles.items()},
        artifacts=made,
        edges=tuple(
            LineageEdge(
                source_artifact_id=source,
                target_artifact_id=target.artifact_id,
                source_role=role,
                target_role=target_role,
                target_artifact_type=target.artifact_type,
            )
            for role, sources in given.items()
            for source in sources
            for target_role, target in roles.items()
        ),
        provenance=_PROVENANCE.to_dict(),
    )

    def event(status: StepStatus, when: dt.datetime, **final: Any) -> StepEvent:
        return StepEvent(
            step_run_id=step_run_id,
            step_spec_id=fingerprint,
            pipeline_run_id=run_id,
            step_number=1,
            step_name=name,
            status=status,
            operation=name,
            version="v1",
            params=step_config,
            backend="local-thread",
            timestamp=when,
            output_roles=(OUTPUT_ROLE, VALUE_ROLE),
            **final,
        )

    # What a completed function step's event names, for completed() to read back.
    names = (
        {
            "output_path": made[0].fields["path"],
            "output_artifact_id": made[0].artifact_id,
            "value_artifact_id": made[1].artifact_id,
        }
        if made
        else {}
    )
    return FunctionStep(
        execution=execution,
        running=event(StepStatus.RUNNING, at),
        final=event(
            StepStatus.COMPLETED if error is None else StepStatus.FAILED,
            ended,
            total_count=1,
            succeeded_count=int(error is None),
            failed_count=int(error is not None),
            duration_seconds=seconds,
            error=error,
            metadata=names,
        ),
    )


def commit_function_step(store: DeltaStore, step: FunctionStep) -> WaveReport:
    """Record ``step`` as the engine does: stage its unit, commit the wave, then its events."""
    bundle = store.stage_execution(step.execution)
    report = store.commit_wave([bundle], step_outputs=step.step_outputs)
    store.record_events([step.running, step.final])
    return report


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
def make_step() -> FunctionStepFactory:
    return build_function_step


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


def read_delta(path: Path) -> pl.DataFrame:
    """Every row of the Delta table at ``path``, read with deltalake itself.

    Not ``pl.read_delta``: polars looks for delta-rs's escaped file URIs verbatim, so it cannot
    read a table whose path has a space or a non-ASCII letter, and ``check`` runs these tests a
    second time under such a root (``STEMMA_TEST_ROOT_NAME``, tests/conftest.py).
    """
    return pl.DataFrame(DeltaTable(str(path)).to_pyarrow_table())


def index_rows(artifact_ids: list[str]) -> pl.DataFrame:
    """Rows of the artifact index for ``artifact_ids``, the columns it does not need empty."""
    made = dt.datetime(2026, 12, 7, tzinfo=dt.UTC)
    frame = pl.DataFrame(
        {"artifact_id": artifact_ids, "artifact_type": "metric", "created_at": made}
    )
    return pl.concat([ARTIFACT_INDEX.empty(), frame], how="diagonal_relaxed")
