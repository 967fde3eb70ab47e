"""Every record a SqliteStore takes comes back as it went in."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import sqlite3
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
from stemma.core.operations.specs import register_artifact_type
from stemma.core.records import StepStatus
from stemma.core.store import RunStore, Store
from stemma.core.store.sqlite import SqliteStore

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]
EventFactory = Callable[..., StepEvent]
T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)

register_artifact_type(
    "sqlite_structure",
    "artifacts/sqlite_structures",
    {"chains": "list<string>", "resolution": "float64"},
)


def _rows(store: SqliteStore, sql: str) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(store.database)) as connection:
        return connection.execute(sql).fetchall()


def test_sqlite_store_is_a_pipeline_store(store: SqliteStore) -> None:
    typed: RunStore = store  # checked by the type checker too, signatures included
    assert isinstance(typed, Store)
    assert isinstance(store, RunStore)


def test_sqlite_store_constructing_and_reading_an_empty_root_writes_nothing(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "root")
    assert store.step_events() == []
    assert store.load_artifacts(["a" * 32]) == {}
    assert store.completed(["fp"]) == {}
    assert store.latest_by_name("score") is None
    assert not (tmp_path / "root").exists()


def test_staging_writes_files_only_never_the_database(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundle = store.stage_execution(make_record([make_metric(1)]))
    assert sorted(path.name for path in bundle.iterdir()) == ["records.json", "sentinel.json"]
    assert bundle.parent.parent.parent == store.layout.staging / "1_score"
    assert not store.database.exists()


def test_record_events_round_trip_in_order(store: SqliteStore, make_event: EventFactory) -> None:
    events = [
        make_event(StepStatus.RUNNING, 0),
        make_event(StepStatus.COMPLETED, 5),
        make_event(StepStatus.RUNNING, 5, run="run-2", pipeline_run_id="other_run"),
    ]
    store.record_events(events)
    store.record_events([])

    assert store.step_events() == events
    assert store.step_events("other_run") == events[2:]
    assert store.step_events("missing_run") == []


def test_latest_step_filters_by_status_and_takes_the_newest(
    store: SqliteStore, make_event: EventFactory
) -> None:
    assert store.latest_step("fp-1", [StepStatus.COMPLETED]) is None
    running, done = make_event(StepStatus.RUNNING, 0), make_event(StepStatus.COMPLETED, 5)
    store.record_events([running, done, make_event(StepStatus.RUNNING, 10, run="run-2")])

    assert store.latest_step("fp-1", [StepStatus.COMPLETED]) == done
    newest = store.latest_step("fp-1", [StepStatus.RUNNING, StepStatus.COMPLETED])
    assert newest is not None
    assert newest.step_run_id == "run-2"
    assert store.latest_step("fp-1", [StepStatus.FAILED]) is None
    assert store.latest_step("fp-1", []) is None
    assert store.latest_step("fp-other", [StepStatus.RUNNING]) is None


def test_completed_steps_keeps_the_newest_completed_event_per_fingerprint(
    store: SqliteStore, make_event: EventFactory
) -> None:
    old = make_event(StepStatus.COMPLETED, 1, run="a")
    new = make_event(StepStatus.COMPLETED, 9, run="b")
    other = make_event(StepStatus.COMPLETED, 3, run="c", spec="fp-2")
    store.record_events([new, old, other, make_event(StepStatus.FAILED, 20, run="d")])

    assert store.completed_steps() == {"fp-1": new, "fp-2": other}


def test_step_outputs_round_trip_including_an_empty_role(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    assert store.step_outputs(["run-1"]) == {}
    ids = (make_metric(2).artifact_id, make_metric(1).artifact_id)
    outputs = StepOutputs(step_run_id="run-1", outputs={"out": ids, "rejected": ()})
    bundle = store.stage_execution(make_record([make_metric(1), make_metric(2)]))
    store.commit_wave([bundle], step_outputs=outputs)

    found = store.step_outputs(["run-1", "run-unknown"])

    assert found == {"run-1": {"out": tuple(sorted(ids)), "rejected": ()}}


def test_executions_by_key_returns_the_newest_success_with_its_edges(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    assert store.executions_by_key(["k"]) == {}
    inputs = {"data": ("c" * 32, "a" * 32, "b" * 32), "model": ("d" * 32,)}
    old = make_record([make_metric(1)], key="k", inputs=inputs, ended=T0)
    new = dataclasses.replace(
        make_record([make_metric(2)], key="k", inputs=inputs, ended=T0 + dt.timedelta(hours=1)),
        provenance={"user": "tester", "host": "localhost", "command_line": ["pytest"]},
    )
    failed = make_record(key="k", success=False, ended=T0 + dt.timedelta(hours=2))
    other = make_record([make_metric(3)], key="k2")
    store.commit_wave([store.stage_execution(r) for r in (old, new, failed, other)])

    found = store.executions_by_key(["k", "k2", "missing"])

    assert set(found) == {"k", "k2"}
    assert found["k"] == dataclasses.replace(new, artifacts=())
    assert found["k"].inputs["data"] == ("c" * 32, "a" * 32, "b" * 32)  # order kept
    assert found["k2"].outputs == {"out": (make_metric(3).artifact_id,)}


def test_a_failed_execution_keeps_its_error_and_output(
    store: SqliteStore, make_record: RecordFactory
) -> None:
    failed = dataclasses.replace(make_record(success=False), tool_output="last lines")
    store.commit_wave([store.stage_execution(failed)])

    (row,) = _rows(store, "SELECT success, error, tool_output FROM executions")

    assert row == (0, "Traceback: boom", "last lines")
    assert store.executions_by_key([failed.execution_spec_id]) == {}


def test_load_artifacts_returns_every_type_with_its_content(
    store: SqliteStore, make_record: RecordFactory, tmp_path: Path
) -> None:
    (tmp_path / "model.bin").write_bytes(b"weights")
    made = [
        DataDraft.draft(b"a,b\n1,2\n3,4\n", "table.csv", step_number=1, metadata={"k": 1}),
        ConfigDraft.draft({"model": {"$artifact": "e" * 32}}, "run.json", step_number=1),
        FileRefDraft.draft(tmp_path / "model.bin", step_number=1),
        CustomDraft.draft(
            "sqlite_structure", b"ATOM\x00\xff", "x.pdb", {"chains": ["A"], "resolution": 1.5}
        ),
    ]
    artifacts = [draft.finalize() for draft in made]
    # an artifact that names no step is recorded as its producing step's
    artifacts[3] = dataclasses.replace(artifacts[3], origin_step=1)
    store.commit_wave([store.stage_execution(make_record(artifacts))])

    loaded = store.load_artifacts([a.artifact_id for a in artifacts] + ["f" * 32])

    assert loaded == {a.artifact_id: a for a in artifacts}
    assert loaded[artifacts[0].artifact_id].fields == {"columns": ["a", "b"], "row_count": 2}
    assert loaded[artifacts[2].artifact_id].content is None


def test_worker_log_noted_beside_a_bundle_is_committed_with_its_execution(
    store: SqliteStore, make_record: RecordFactory
) -> None:
    first, second = make_record(), make_record()
    bundle = store.stage_executions([first, second])
    store.note_worker_log(bundle, [first.execution_run_id], "slurm said hello")

    store.commit_wave([bundle])

    logs = {
        row[0]: row[1]
        for row in _rows(store, "SELECT execution_run_id, worker_log FROM executions")
    }
    assert logs == {first.execution_run_id: "slurm said hello", second.execution_run_id: None}


def test_ancestry_and_descendants_walk_lineage_and_fill_edge_types(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
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

    assert store.ancestry([c.artifact_id, d.artifact_id, a.artifact_id]) == {
        c.artifact_id: frozenset({c.artifact_id, b.artifact_id, a.artifact_id, x.artifact_id}),
        d.artifact_id: frozenset({d.artifact_id, b.artifact_id, a.artifact_id}),
        a.artifact_id: frozenset({a.artifact_id}),
    }
    assert store.descendants([a.artifact_id]) == {
        a.artifact_id: frozenset({b.artifact_id, c.artifact_id, d.artifact_id})
    }
    assert store.descendants([a.artifact_id], "data") == {a.artifact_id: frozenset()}
    types = _rows(store, "SELECT source_artifact_type, target_artifact_type FROM artifact_edges")
    assert types == [("metric", "metric")] * 4
