"""An in-memory RunStore and unit builders for the worker tests."""

from __future__ import annotations

import csv
import dataclasses
import io
import subprocess
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from stemma.core.engine.worker.units import ExecutionUnit, UnitGroup
from stemma.core.execution_records import ExecutionRecord, StepEvent, StepOutputs
from stemma.core.operations import (
    ArtifactResult,
    DataDraft,
    ExecuteInput,
    InputSpec,
    OperationDefinition,
    OutputSpec,
    PostprocessInput,
    PreprocessInput,
)
from stemma.core.operations.drafts import ArtifactDraft, FinalizedArtifact
from stemma.core.records import StepRecord, StepStatus
from stemma.core.store import WaveOutcome
from stemma.core.store.locations import RootLayout


class PlainStore:
    """A ``Store`` and no more: it answers ``plan`` but cannot run steps (no ``RunStore``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def layout(self) -> RootLayout:
        return RootLayout(self.root)

    def recover(self, step_name: str | None = None) -> int:
        return 0

    def completed(self, fingerprints: Collection[str]) -> dict[str, StepRecord]:
        return {}

    def latest_by_name(self, name: str) -> StepRecord | None:
        return None


class FakeStore:
    """Loads artifacts from a dict and records the staged executions."""

    def __init__(
        self,
        root: Path,
        artifacts: Sequence[FinalizedArtifact] = (),
        *,
        fail_failures: bool = False,
        fail_successes: bool = False,
    ) -> None:
        self.root = root
        self.artifacts = {a.artifact_id: a for a in artifacts}
        self.edges: list[tuple[str, str]] = []
        """Lineage as (source id, target id) pairs, for ``descendants``."""
        self.staged: list[ExecutionRecord] = []
        self.packs: list[int] = []
        """How many records each ``stage_executions`` call staged together."""
        self.fail_failures = fail_failures
        self.fail_successes = fail_successes

    @property
    def layout(self) -> RootLayout:
        return RootLayout(self.root)

    @property
    def record(self) -> ExecutionRecord:
        (only,) = self.staged
        return only

    def load_artifacts(
        self, artifact_ids: Collection[str], *, content: bool = True
    ) -> dict[str, FinalizedArtifact]:
        found = {i: self.artifacts[i] for i in artifact_ids if i in self.artifacts}
        if content:
            return found
        return {i: dataclasses.replace(a, content=None) for i, a in found.items()}

    def stage_execution(self, record: ExecutionRecord) -> Path:
        if record.success and self.fail_successes:
            raise OSError("disk full while staging a success")
        if not record.success and self.fail_failures:
            raise OSError("disk full while staging a failure")
        self.staged.append(record)
        return self.root / "staging" / record.execution_run_id

    def stage_executions(self, records: Sequence[ExecutionRecord]) -> Path:
        # All or nothing, like a real bundle: refuse the pack if any record would be refused.
        for record in records:
            if (record.success and self.fail_successes) or (
                not record.success and self.fail_failures
            ):
                raise OSError("disk full while staging a pack")
        self.staged.extend(records)
        self.packs.append(len(records))
        return self.root / "staging" / records[0].execution_run_id

    def recover(self, step_name: str | None = None) -> int:
        raise NotImplementedError

    def completed(self, fingerprints: Collection[str]) -> dict[str, StepRecord]:
        raise NotImplementedError

    def latest_by_name(self, name: str) -> StepRecord | None:
        raise NotImplementedError

    def record_events(self, events: Sequence[StepEvent]) -> None:
        raise NotImplementedError

    def note_worker_log(self, bundle: Path, execution_run_ids: Sequence[str], log: str) -> None:
        raise NotImplementedError

    def commit_wave(
        self, bundles: Sequence[Path], *, step_outputs: StepOutputs | None = None
    ) -> WaveOutcome:
        raise NotImplementedError

    def latest_step(self, step_spec_id: str, statuses: Collection[StepStatus]) -> StepEvent | None:
        raise NotImplementedError

    def step_outputs(self, step_run_ids: Collection[str]) -> dict[str, dict[str, tuple[str, ...]]]:
        raise NotImplementedError

    def executions_by_key(self, keys: Collection[str]) -> dict[str, ExecutionRecord]:
        raise NotImplementedError

    def ancestry(self, artifact_ids: Collection[str]) -> dict[str, frozenset[str]]:
        raise NotImplementedError

    def step_events(self, pipeline_run_id: str | None = None) -> list[StepEvent]:
        return []

    def completed_steps(self) -> dict[str, StepEvent]:
        return {}

    def descendants(
        self, artifact_ids: Collection[str], artifact_type: str | None = None
    ) -> dict[str, frozenset[str]]:
        found: dict[str, frozenset[str]] = {}
        for artifact_id in artifact_ids:
            reached: set[str] = set()
            stack = [artifact_id]
            while stack:
                parent = stack.pop()
                for source, target in self.edges:
                    if source == parent and target not in reached and target != artifact_id:
                        reached.add(target)
                        stack.append(target)
            found[artifact_id] = frozenset(
                i
                for i in reached
                if artifact_type is None
                or (i in self.artifacts and self.artifacts[i].artifact_type == artifact_type)
            )
        return found


def final(draft: ArtifactDraft) -> FinalizedArtifact:
    return draft.finalize()


def group(group_id: str | None = None, **inputs: Sequence[FinalizedArtifact]) -> UnitGroup:
    return UnitGroup(
        group_id=group_id,
        inputs={role: tuple(a.artifact_id for a in items) for role, items in inputs.items()},
    )


def make_unit(
    op: OperationDefinition,
    root: Path,
    *groups: UnitGroup,
    preserve_working: bool = False,
    step_number: int = 1,
) -> ExecutionUnit:
    return ExecutionUnit(
        operation=op,
        step_run_id="a" * 32,
        step_spec_id="b" * 32,
        step_name=str(op.name),
        step_number=step_number,
        version="v0",
        execution_spec_id="c" * 32,
        groups=groups,
        root=str(root),
        backend="local",
        preserve_working=preserve_working,
    )


def sandbox_of(root: Path, step_number: int, op: str, run_id: str) -> Path:
    return root / "working" / f"{step_number}_{op}" / run_id[:2] / run_id[2:4] / run_id


def by_name(records: Mapping[str, FinalizedArtifact]) -> dict[str, FinalizedArtifact]:
    return {a.original_name: a for a in records.values()}


def csv_bytes(rows: list[tuple[int, int]]) -> bytes:
    return ("x,y\n" + "".join(f"{x},{y}\n" for x, y in rows)).encode()


class WtScale(OperationDefinition):
    name = "wt_scale"
    inputs: ClassVar = {"data": InputSpec(artifact_type="data")}
    outputs: ClassVar = {
        "data": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["data"]})
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {"paths": inp.materialized_paths["data"]}

    def execute(self, inp: ExecuteInput) -> Any:
        for path in inp.prepared["paths"]:
            rows = list(csv.DictReader(io.StringIO(path.read_text())))
            out = "x,y\n" + "".join(f"{r['x']},{int(r['y']) * 2}\n" for r in rows)
            (inp.execute_dir / f"{path.name.split('.')[0]}_scaled.csv").write_text(out)
        return len(inp.prepared["paths"])

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        drafts = [DataDraft.draft(p.read_bytes(), p.name) for p in inp.files]
        return ArtifactResult(artifacts={"data": drafts}, metadata={"count": inp.execute_result})


class WtBoom(OperationDefinition):
    name = "wt_boom"
    inputs: ClassVar = {"data": InputSpec(artifact_type="data")}
    outputs: ClassVar = {
        "data": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["data"]})
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {}

    def execute(self, inp: ExecuteInput) -> Any:
        print("hello from python")
        subprocess.run(["echo", "hello from echo"], check=True)
        raise RuntimeError("boom")

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        return ArtifactResult(artifacts={"data": []})
