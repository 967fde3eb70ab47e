from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from stemma.core.records import StepOutcome
from stemma.storage import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTIONS,
    FILE_REFS,
    METRICS,
    OUTCOME_TABLES,
    STEPS,
    DeltaStore,
    StagedBundleError,
    TableSpec,
    artifacts,
)
from stemma.storage.staging import read_bundle
from stemma.storage.tables import append_rows

OutcomeFactory = Callable[..., StepOutcome]


def _count(store: DeltaStore, spec: TableSpec) -> int:
    path = spec.path(store.layout.delta)
    return pl.read_delta(str(path)).height if path.exists() else 0


def _log_actions(store: DeltaStore, spec: TableSpec, kind: str) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = []
    for file in sorted((spec.path(store.layout.delta) / "_delta_log").glob("*.json")):
        for line in file.read_text().splitlines():
            action: dict[str, Any] = json.loads(line)
            if kind in action:
                actions.append(action[kind])
    return actions


def test_stage_outcome_writes_one_file_per_table_with_sentinel(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    outcome = make_outcome(inputs={"data": ("a" * 32,)})
    bundle = store.stage_outcome(outcome)

    erid = outcome.execution_run_id
    assert bundle == store.layout.staging / "train" / erid[:2] / erid[2:4] / erid
    assert sorted(path.name for path in bundle.iterdir()) == sorted(
        spec.staged_name for spec in OUTCOME_TABLES
    )
    assert not store.layout.delta.exists()


def test_commit_staged_same_bundle_twice_adds_nothing(
    store: DeltaStore, make_outcome: OutcomeFactory, tmp_path: Path
) -> None:
    outcome = make_outcome(inputs={"data": ("a" * 32,)})
    bundle = store.stage_outcome(outcome)
    copy = shutil.copytree(bundle, tmp_path / "copy")

    assert store.commit_staged(bundle) is True
    assert not bundle.exists()
    counts = {spec.name: _count(store, spec) for spec in OUTCOME_TABLES}
    shutil.copytree(copy, bundle)
    assert store.commit_staged(bundle) is False

    assert {spec.name: _count(store, spec) for spec in OUTCOME_TABLES} == counts
    assert counts[EXECUTIONS.name] == 1
    assert counts[ARTIFACT_EDGES.name] == 2
    for spec in OUTCOME_TABLES:
        transactions = _log_actions(store, spec, "txn")
        assert [txn["appId"] for txn in transactions] == [f"stemma-exec-{outcome.execution_run_id}"]
    assert not bundle.exists()


def test_commit_staged_missing_bundle_returns_false(store: DeltaStore, tmp_path: Path) -> None:
    assert store.commit_staged(tmp_path / "gone") is False


def test_commit_staged_incomplete_bundle_raises(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    bundle = store.stage_outcome(make_outcome())
    (bundle / EXECUTIONS.staged_name).unlink()

    with pytest.raises(StagedBundleError, match=r"executions\.parquet"):
        store.commit_staged(bundle)
    assert not store.layout.delta.exists()


def test_record_outcome_same_artifact_in_two_outcomes_indexes_once(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    first = make_outcome(value={"loss": 0.25})
    second = make_outcome(value={"loss": 0.25})
    store.record_outcome(first)
    store.record_outcome(second)

    # Same step, same value: the file ref and the metric are both the same artifacts again.
    assert first.value_artifact_id == second.value_artifact_id
    assert first.output == second.output
    assert _count(store, METRICS) == 1
    assert _count(store, FILE_REFS) == 1
    assert _count(store, EXECUTIONS) == 2
    index = artifacts(store.layout.root)
    assert index.get_column("artifact_type").sort().to_list() == ["file_ref", "metric"]


def test_commit_same_id_twice_in_one_bundle_indexes_once(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    # Contrived on purpose: the output and the value share an id, so one bundle holds the same
    # artifact twice in the index.
    probe = make_outcome(value={"same": True})
    assert probe.value_artifact_id is not None
    outcome = make_outcome(value={"same": True}, output_artifact_id=probe.value_artifact_id)
    store.record_outcome(outcome)

    assert _count(store, ARTIFACT_INDEX) == 1
    assert _count(store, METRICS) == 1
    assert _count(store, FILE_REFS) == 1


def test_commit_fills_input_types_from_the_index(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    upstream = make_outcome()
    assert upstream.output is not None
    store.record_outcome(upstream)
    downstream = make_outcome(inputs={"data": (upstream.output.artifact_id, "u" * 32)})
    store.record_outcome(downstream)

    edges = pl.read_delta(str(ARTIFACT_EDGES.path(store.layout.delta)))
    types = {row["source_artifact_id"]: row["source_artifact_type"] for row in edges.to_dicts()}
    assert types == {upstream.output.artifact_id: "file_ref", "u" * 32: None}


def test_record_outcome_steps_row_metadata_names_outputs(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    outcome = make_outcome()
    store.record_outcome(outcome)

    row = pl.read_delta(str(STEPS.path(store.layout.delta))).row(0, named=True)
    assert outcome.output is not None
    assert json.loads(row["metadata"]) == {
        "output_path": outcome.output.relative_path,
        "output_artifact_id": outcome.output.artifact_id,
        "value_artifact_id": outcome.value_artifact_id,
    }


def test_commit_staged_after_partial_commit_writes_only_the_rest(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    # A committer died after the content tables: they hold the transaction, the rest do not.
    outcome = make_outcome(inputs={"data": ("a" * 32,)})
    bundle = store.stage_outcome(outcome)
    staged = read_bundle(bundle)
    transaction = f"stemma-exec-{outcome.execution_run_id}"
    for spec in (METRICS, FILE_REFS):
        assert append_rows(store.layout, spec, staged[spec], app_id=transaction)

    assert store.commit_staged(bundle) is True

    assert {spec.name: _count(store, spec) for spec in OUTCOME_TABLES} == {
        METRICS.name: 1,
        FILE_REFS.name: 1,
        ARTIFACT_INDEX.name: 2,
        ARTIFACT_EDGES.name: 2,
        "provenance/execution_edges": 3,
        STEPS.name: 1,
        EXECUTIONS.name: 1,
    }
    assert len(_log_actions(store, METRICS, "txn")) == 1
