"""A root stemma-core built on SQLite, opened by the Delta store: imported once, nothing rebuilt."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stemma.core.examples import DataGenerator, MetricCalculator, Transform
from stemma.core.execution_records import ExecutionRecord, StepEvent
from stemma.core.front.pipeline import Pipeline
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.records import StepStatus
from stemma.core.store.sqlite import SqliteStore
from stemma.storage import DeltaStore, StorageError, artifacts, executions, steps
from stemma.storage import sqlite_import as sqlite_import_module
from stemma.storage.sqlite_import import MARKER

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]


def _run(root: Path) -> tuple[list[Any], set[str], set[str]]:
    pipeline = Pipeline.create("imported", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 5})
    transformed = pipeline.run(Transform, inputs={"dataset": generated.output("datasets")})
    scored = pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    pipeline.finalize()
    caches = [r.metadata["cache"] for r in (generated, transformed, scored)]
    datasets = set(pipeline.artifact_ids(transformed.output("dataset")))
    return caches, datasets, set(pipeline.artifact_ids(scored.output("metrics")))


def _sqlite_count(root: Path, table: str) -> int:
    with contextlib.closing(sqlite3.connect(root / "core.sqlite")) as connection:
        return int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_a_root_built_on_sqlite_reruns_fully_cached_on_delta_with_the_same_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "store"
    monkeypatch.setenv("STEMMA_STORE", "sqlite")
    first_caches, datasets, metrics = _run(root)
    assert first_caches == [None, None, None]
    assert not (root / "delta").exists()
    on_sqlite = SqliteStore(root)
    lineage = on_sqlite.ancestry(sorted(metrics))
    loaded = on_sqlite.load_artifacts(sorted(datasets | metrics))

    monkeypatch.setenv("STEMMA_STORE", "delta")
    with caplog.at_level(logging.INFO, logger="stemma.storage.sqlite_import"):
        caches, datasets_again, metrics_again = _run(root)

    assert caches == ["step", "step", "step"]
    assert (datasets_again, metrics_again) == (datasets, metrics)
    assert executions(root).height == _sqlite_count(root, "executions") == 7
    assert steps(root).height == _sqlite_count(root, "steps") + 3  # + the rerun's cache hits
    assert artifacts(root).height == _sqlite_count(root, "artifacts")
    delta = DeltaStore(root)
    assert delta.ancestry(sorted(metrics)) == lineage
    assert delta.load_artifacts(sorted(datasets | metrics)) == loaded
    (message,) = [r.getMessage() for r in caplog.records if "imported" in r.getMessage()]
    assert "core.sqlite" in message
    assert "done once" in message
    assert json.loads((root / "delta" / MARKER).read_text())["rows"]["executions"] == 7


def test_the_import_happens_once_and_commits_what_core_left_staged(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    root = tmp_path / "root"
    core = SqliteStore(root)
    core.commit_wave([core.stage_execution(make_record([make_metric(1)]))])
    left = core.stage_execution(make_record([make_metric(2)], key="left-staged"))

    store = DeltaStore(root)
    assert store.recover() == 0  # nothing of Delta's own was staged

    assert not left.exists()
    assert executions(root).height == 2
    assert store.executions_by_key(["left-staged"])["left-staged"].outputs == {
        "out": (make_metric(2).artifact_id,)
    }
    core.commit_wave([core.stage_execution(make_record([make_metric(3)]))])
    store.recover()  # recorded as imported: what core records afterwards is not
    assert executions(root).height == 2
    assert artifacts(root).height == 2


def test_an_interrupted_import_resumes_without_duplicating_a_row(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "root"
    core = SqliteStore(root)
    bundles = [core.stage_execution(make_record([make_metric(i)])) for i in range(4)]
    core.commit_wave(bundles)
    core.record_events([_event(StepStatus.RUNNING), _event(StepStatus.COMPLETED)])
    real_append = sqlite_import_module.append_rows  # pyright: ignore[reportPrivateImportUsage]
    calls: list[str] = []

    def append_then_die(*args: Any, **kwargs: Any) -> bool:
        calls.append(args[1].name)
        if len(calls) == 4:  # metrics, index, execution edges written; steps not
            raise RuntimeError("killed mid-import")
        return real_append(*args, **kwargs)

    monkeypatch.setattr(sqlite_import_module, "append_rows", append_then_die)
    with pytest.raises(RuntimeError, match="killed mid-import"):
        DeltaStore(root).recover()
    assert not (root / "delta" / MARKER).exists()
    monkeypatch.setattr(sqlite_import_module, "append_rows", real_append)

    DeltaStore(root).recover()

    assert calls[:3] == ["artifacts/metrics", "artifacts/index", "provenance/execution_edges"]
    assert executions(root).height == 4
    assert steps(root).height == 2
    assert artifacts(root).height == 4


def test_function_step_records_read_the_same_after_the_import(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    root = tmp_path / "root"
    core = SqliteStore(root)
    value = make_metric(42)
    core.commit_wave([core.stage_execution(make_record([value]))])
    done = _event(StepStatus.COMPLETED, metadata={"value_artifact_id": value.artifact_id})
    core.record_events([done])
    before = core.completed(["fp-fn"])

    store = DeltaStore(root)
    assert store.completed(["fp-fn"]) == {}  # reads import nothing: recover() does
    store.recover()
    after = store.completed(["fp-fn"])

    assert after == before
    assert after["fp-fn"].value == {"value": 42}


def test_a_damaged_core_database_stops_recovery_with_a_message_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "core.sqlite").write_bytes(b"this is not a database" * 100)

    with pytest.raises(StorageError, match=r"cannot import .*core\.sqlite.*move it out"):
        DeltaStore(root).recover()

    assert not (root / "delta" / MARKER).exists()


def _event(status: StepStatus, metadata: dict[str, Any] | None = None) -> StepEvent:
    return StepEvent(
        step_run_id="run-fn",
        step_spec_id="fp-fn",
        pipeline_run_id="lazy_20260101_120000_abcdef01",
        step_number=0,
        step_name="fn",
        status=status,
        operation="fn",
        version="v0",
        params={"x": 1},
        backend="local",
        timestamp=dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC),
        metadata=metadata or {},
    )
