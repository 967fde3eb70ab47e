"""The Pipeline end to end on the SQLite store alone (``STEMMA_STORE=sqlite``), local processes."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stemma.core.engine.references import StepResult
from stemma.core.examples import DataGenerator, Fail, MetricCalculator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.store import available_stores, open_run_store
from stemma.core.store.sqlite import SqliteStore


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STEMMA_STORE", "sqlite")  # the workers inherit it
    return tmp_path / "store"


@dataclass(frozen=True)
class Run:
    generated: StepResult
    transformed: StepResult
    scored: StepResult
    summary: dict[str, Any]
    pipeline: Pipeline


def _run(root: Path) -> Run:
    pipeline = Pipeline.create("first", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 5})
    transformed = pipeline.run(
        Transform, inputs={"dataset": generated.output("datasets")}, params={"scale": 2.0}
    )
    scored = pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    return Run(generated, transformed, scored, pipeline.finalize(), pipeline)


def _ids(run: Run, step: StepResult, role: str) -> set[str]:
    return set(run.pipeline.artifact_ids(step.output(role)))


def _rows(root: Path, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(root / "core.sqlite")) as connection:
        return connection.execute(sql).fetchall()


def test_sqlite_is_a_registered_store_and_opens_for_the_pipeline(root: Path) -> None:
    assert available_stores()["sqlite"] == "stemma.core.store.sqlite:SqliteStore"
    assert isinstance(open_run_store(root), SqliteStore)


def test_pipeline_on_sqlite_first_run_builds_every_step(root: Path) -> None:
    run = _run(root)

    assert run.summary["overall_success"] is True
    assert [s["succeeded"] for s in run.summary["steps"]] == [1, 3, 3]
    assert len(_ids(run, run.transformed, "dataset")) == 3
    kinds = _rows(root, "SELECT artifact_type, count(*) FROM artifacts GROUP BY 1 ORDER BY 1")
    assert kinds == [("data", 6), ("metric", 3)]
    assert _rows(root, "SELECT count(*) FROM executions WHERE success") == [(7,)]
    assert not (root / "delta").exists()
    assert not list((root / "staging").glob("*/*/*/*/sentinel.json"))


def test_pipeline_on_sqlite_identical_rerun_is_fully_cached(root: Path) -> None:
    first = _run(root)
    before = _rows(root, "SELECT count(*) FROM executions")

    second = _run(root)

    assert _rows(root, "SELECT count(*) FROM executions") == before
    for result in (second.generated, second.transformed, second.scored):
        assert result.metadata["cache"] == "step"
    assert _ids(first, first.scored, "metrics") == _ids(second, second.scored, "metrics")


def test_pipeline_on_sqlite_records_lineage_from_metrics_back_to_generated_data(
    root: Path,
) -> None:
    run = _run(root)
    store = open_run_store(root)
    generated = _ids(run, run.generated, "datasets")
    transformed = _ids(run, run.transformed, "dataset")
    metrics = _ids(run, run.scored, "metrics")

    ancestry = store.ancestry(sorted(metrics))

    for metric in metrics:
        assert len(ancestry[metric] & transformed) == 1
        assert len(ancestry[metric] & generated) == 1
    below = store.descendants(sorted(generated), "metric")
    assert set().union(*below.values()) == metrics


def test_pipeline_on_sqlite_partial_failure_passes_successes_downstream(root: Path) -> None:
    pipeline = Pipeline.create("partial", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3})
    failing = pipeline.run(
        Fail, inputs={"dataset": generated.output("datasets")}, params={"match": "dataset_1"}
    )
    scored = pipeline.run(MetricCalculator, inputs={"dataset": failing.output("dataset")})
    pipeline.finalize()

    assert (failing.success, failing.succeeded_count, failing.failed_count) == (False, 2, 1)
    assert scored.succeeded_count == 2
    (error,) = _rows(root, "SELECT error FROM executions WHERE NOT success")
    assert "refusing dataset_1.csv" in error[0]
