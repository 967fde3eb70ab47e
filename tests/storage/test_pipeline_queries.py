from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord, LineageEdge, StepEvent, StepOutputs
from stemma.core.operations.drafts import (
    ConfigDraft,
    CustomDraft,
    DataDraft,
    FileRefDraft,
    FinalizedArtifact,
)
from stemma.core.operations.specs import get_artifact_type, register_artifact_type
from stemma.core.records import StepStatus
from stemma.core.store import RunStore
from stemma.storage import ARTIFACT_EDGES, DeltaStore
from stemma.storage.artifact_tables import BUILTIN_TABLES, table_for_type

from .conftest import FunctionStepFactory, commit_function_step, read_delta

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]
T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)

register_artifact_type(
    "structure", "artifacts/structures", {"chains": "list<string>", "resolution": "float64"}
)


def _event(status: StepStatus, minutes: int, run: str = "run-1") -> StepEvent:
    return StepEvent(
        step_run_id=run,
        step_spec_id="fp-1",
        pipeline_run_id="demo_20260101_120000_abcdef01",
        step_number=2,
        step_name="score",
        status=status,
        operation="Score",
        version="v0",
        params={"threshold": 0.5},
        backend="local",
        timestamp=T0 + dt.timedelta(minutes=minutes),
        dep_fingerprints=("fp-0",),
        output_roles=("out",),
        total_count=3,
        metadata={"inputs": {"data": ["fp-0", "out"]}, "output_types": {"out": "metric"}},
    )


def test_delta_store_is_a_pipeline_store(store: DeltaStore) -> None:
    assert isinstance(store, RunStore)


def test_builtin_content_tables_hold_every_registered_field() -> None:
    for key, spec in BUILTIN_TABLES.items():
        assert set(get_artifact_type(key).schema_fields) <= set(spec.columns), key
    assert table_for_type("structure").name == "artifacts/structures"


def test_record_events_then_latest_step_filters_by_status(store: DeltaStore) -> None:
    assert store.latest_step("fp-1", [StepStatus.COMPLETED]) is None  # no table yet
    running, done = _event(StepStatus.RUNNING, 0), _event(StepStatus.COMPLETED, 5)
    store.record_events([running, done, _event(StepStatus.RUNNING, 10, run="run-2")])

    assert store.latest_step("fp-1", [StepStatus.COMPLETED]) == done
    newest = store.latest_step("fp-1", [StepStatus.RUNNING, StepStatus.COMPLETED])
    assert newest is not None
    assert newest.step_run_id == "run-2"
    assert store.latest_step("fp-1", [StepStatus.FAILED]) is None
    assert store.latest_step("fp-other", [StepStatus.RUNNING]) is None


def test_step_outputs_round_trip_including_an_empty_role(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    assert store.step_outputs(["run-1"]) == {}
    ids = (make_metric(2).artifact_id, make_metric(1).artifact_id)
    outputs = StepOutputs(step_run_id="run-1", outputs={"out": ids, "rejected": ()})
    bundle = store.stage_execution(make_record([make_metric(1), make_metric(2)]))
    store.commit_wave([bundle], step_outputs=outputs)

    found = store.step_outputs(["run-1", "run-unknown"])

    assert found == {"run-1": {"out": tuple(sorted(ids)), "rejected": ()}}


def test_executions_by_key_returns_newest_success_with_its_edges(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    assert store.executions_by_key(["k"]) == {}
    inputs = {"data": ("c" * 32, "a" * 32, "b" * 32), "model": ("d" * 32,)}
    old = make_record([make_metric(1)], key="k", inputs=inputs, ended=T0)
    new = make_record([make_metric(2)], key="k", inputs=inputs, ended=T0 + dt.timedelta(hours=1))
    failed = make_record(key="k", success=False, ended=T0 + dt.timedelta(hours=2))
    other = make_record([make_metric(3)], key="k2")
    store.commit_wave([store.stage_execution(r) for r in (old, new, failed, other)])

    found = store.executions_by_key(["k", "k2", "missing"])

    assert set(found) == {"k", "k2"}
    assert found["k"] == dataclasses.replace(new, artifacts=())
    assert found["k"].inputs["data"] == ("c" * 32, "a" * 32, "b" * 32)  # order kept
    assert found["k2"].outputs == {"out": (make_metric(3).artifact_id,)}


def test_load_artifacts_reads_every_type_from_its_own_table(
    store: DeltaStore, make_record: RecordFactory, tmp_path: Path
) -> None:
    (tmp_path / "model.bin").write_bytes(b"weights")
    made = [
        DataDraft.draft(b"a,b\n1,2\n3,4\n", "table.csv", step_number=1, metadata={"k": 1}),
        ConfigDraft.draft({"model": {"$artifact": "e" * 32}}, "run.json", step_number=1),
        FileRefDraft.draft(tmp_path / "model.bin", step_number=1),
        CustomDraft.draft("structure", b"ATOM", "x.pdb", {"chains": ["A", "B"], "resolution": 1.5}),
    ]
    artifacts = [draft.finalize() for draft in made]
    artifacts[3] = dataclasses.replace(artifacts[3], origin_step=1)
    store.commit_wave([store.stage_execution(make_record(artifacts))])

    loaded = store.load_artifacts([a.artifact_id for a in artifacts] + ["f" * 32])

    assert loaded == {a.artifact_id: a for a in artifacts}
    assert loaded[artifacts[0].artifact_id].fields == {"columns": ["a", "b"], "row_count": 2}
    assert read_delta(store.layout.delta / "artifacts/structures").height == 1


def test_load_artifacts_reads_function_step_values_and_outputs(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    step = make_step(value={"loss": 0.25})
    commit_function_step(store, step)

    loaded = store.load_artifacts([step.value.artifact_id, step.output.artifact_id])

    made = (step.value, step.output)  # read back with the step that made them
    assert loaded == {a.artifact_id: dataclasses.replace(a, origin_step=1) for a in made}
    assert loaded[step.value.artifact_id].content == b'{"loss":0.25}'


def test_ancestry_walks_a_three_level_chain(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    a, b, c, d, x = (make_metric(i) for i in range(5))

    def edge(source: FinalizedArtifact, target: FinalizedArtifact) -> LineageEdge:
        return LineageEdge(
            source_artifact_id=source.artifact_id,
            target_artifact_id=target.artifact_id,
            source_role="in",
            target_role="out",
        )

    first = make_record([a, x])
    second = make_record([b], edges=[edge(a, b)])
    third = make_record([c, d], edges=[edge(b, c), edge(x, c), edge(b, d)])
    store.commit_wave([store.stage_execution(first), store.stage_execution(second)])
    store.commit_wave([store.stage_execution(third)])

    found = store.ancestry([c.artifact_id, d.artifact_id, a.artifact_id])

    assert found == {
        c.artifact_id: frozenset({c.artifact_id, b.artifact_id, a.artifact_id, x.artifact_id}),
        d.artifact_id: frozenset({d.artifact_id, b.artifact_id, a.artifact_id}),
        a.artifact_id: frozenset({a.artifact_id}),
    }
    edges = read_delta(ARTIFACT_EDGES.path(store.layout.delta))
    assert edges.get_column("source_artifact_type").to_list() == ["metric"] * 4


def test_recover_by_step_name_commits_pipeline_bundles(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundle = store.stage_execution(make_record([make_metric(1)]))

    assert store.recover("other") == 0
    assert store.recover("score") == 1
    assert not bundle.exists()
    assert store.executions_by_key([]) == {}
