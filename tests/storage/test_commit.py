from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from deltalake import DeltaTable

from stemma.storage import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    FILE_REFS,
    METRICS,
    STEPS,
    DeltaStore,
    StagedBundleError,
    TableSpec,
    artifacts,
    commit_staged,
)
from stemma.storage.staging import read_bundle
from stemma.storage.table_places import TablePlace
from stemma.storage.tables import append_rows

from .conftest import FunctionStepFactory, commit_function_step, index_rows, read_delta

FUNCTION_STEP_TABLES = (
    METRICS,
    FILE_REFS,
    ARTIFACT_INDEX,
    ARTIFACT_EDGES,
    EXECUTION_EDGES,
    EXECUTIONS,
)
"""The tables a function step's bundle holds when it has an input (its events are not staged)."""


def _count(store: DeltaStore, spec: TableSpec) -> int:
    path = spec.path(store.layout.delta)
    return read_delta(path).height if path.exists() else 0


def _log_actions(store: DeltaStore, spec: TableSpec, kind: str) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = []
    for file in sorted((spec.path(store.layout.delta) / "_delta_log").glob("*.json")):
        for line in file.read_text().splitlines():
            action: dict[str, Any] = json.loads(line)
            if kind in action:
                actions.append(action[kind])
    return actions


def test_stage_execution_of_a_function_step_writes_one_file_per_table_with_sentinel(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    step = make_step(inputs={"data": ("a" * 32,)})
    bundle = store.stage_execution(step.execution)

    erid = step.execution_run_id
    assert bundle == store.layout.staging / "1_train" / erid[:2] / erid[2:4] / erid
    assert sorted(path.name for path in bundle.iterdir()) == sorted(
        spec.staged_name for spec in FUNCTION_STEP_TABLES
    )
    assert not store.layout.delta.exists()


def test_commit_staged_same_bundle_twice_adds_nothing(
    store: DeltaStore, make_step: FunctionStepFactory, tmp_path: Path
) -> None:
    step = make_step(inputs={"data": ("a" * 32,)})
    bundle = store.stage_execution(step.execution)
    copy = shutil.copytree(bundle, tmp_path / "copy")

    assert commit_staged(store.layout, bundle) is True
    assert not bundle.exists()
    counts = {spec.name: _count(store, spec) for spec in FUNCTION_STEP_TABLES}
    shutil.copytree(copy, bundle)
    assert commit_staged(store.layout, bundle) is False

    assert {spec.name: _count(store, spec) for spec in FUNCTION_STEP_TABLES} == counts
    assert counts[EXECUTIONS.name] == 1
    assert counts[ARTIFACT_EDGES.name] == 2
    for spec in FUNCTION_STEP_TABLES:
        transactions = _log_actions(store, spec, "txn")
        assert [txn["appId"] for txn in transactions] == [f"stemma-exec-{step.execution_run_id}"]
    assert not bundle.exists()


def test_commit_staged_missing_bundle_returns_false(store: DeltaStore, tmp_path: Path) -> None:
    assert commit_staged(store.layout, tmp_path / "gone") is False


def test_commit_staged_incomplete_bundle_raises(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    bundle = store.stage_execution(make_step().execution)
    (bundle / EXECUTIONS.staged_name).unlink()

    with pytest.raises(StagedBundleError, match=r"executions\.parquet"):
        commit_staged(store.layout, bundle)
    assert not store.layout.delta.exists()


def test_same_artifacts_in_two_function_steps_are_indexed_once(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    first = make_step(value={"loss": 0.25})
    second = make_step(value={"loss": 0.25})
    commit_function_step(store, first)
    commit_function_step(store, second)

    # Same step, same value: the file ref and the metric are both the same artifacts again.
    assert first.value.artifact_id == second.value.artifact_id
    assert first.output == second.output
    assert _count(store, METRICS) == 1
    assert _count(store, FILE_REFS) == 1
    assert _count(store, EXECUTIONS) == 2
    index = artifacts(store.layout.root)
    assert index.get_column("artifact_type").sort().to_list() == ["file_ref", "metric"]


@pytest.mark.parametrize("path", ["wave", "recovery"])
def test_commit_same_id_twice_in_one_bundle_indexes_once(
    store: DeltaStore, make_step: FunctionStepFactory, path: str
) -> None:
    # Contrived on purpose: the output and the value share an id, so one bundle holds the same
    # artifact twice in the index.
    probe = make_step(value={"same": True})
    step = make_step(value={"same": True}, output_artifact_id=probe.value.artifact_id)
    bundle = store.stage_execution(step.execution)
    if path == "wave":
        assert store.commit_wave([bundle]).committed == 1
    else:
        assert store.recover() == 1

    assert _count(store, ARTIFACT_INDEX) == 1
    assert _count(store, METRICS) == 1
    assert _count(store, FILE_REFS) == 1


@pytest.mark.parametrize("path", ["wave", "recovery"])
def test_commit_fills_input_types_from_the_index(
    store: DeltaStore, make_step: FunctionStepFactory, path: str
) -> None:
    upstream = make_step("prepare")
    commit_function_step(store, upstream)
    downstream = make_step(inputs={"data": (upstream.output.artifact_id, "u" * 32)})
    bundle = store.stage_execution(downstream.execution)
    if path == "wave":
        assert store.commit_wave([bundle]).committed == 1
    else:
        assert store.recover() == 1

    edges = read_delta(ARTIFACT_EDGES.path(store.layout.delta))
    types = {row["source_artifact_id"]: row["source_artifact_type"] for row in edges.to_dicts()}
    assert types == {upstream.output.artifact_id: "file_ref", "u" * 32: None}
    assert sorted(edges.get_column("target_artifact_type").to_list()) == [
        "file_ref",
        "file_ref",
        "metric",
        "metric",
    ]


def test_completed_function_step_event_metadata_names_its_outputs(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    step = make_step()
    commit_function_step(store, step)

    steps = read_delta(STEPS.path(store.layout.delta))
    row = steps.filter(pl.col("status") == "completed").row(0, named=True)
    assert json.loads(row["metadata"]) == {
        "output_path": step.output_path,
        "output_artifact_id": step.output.artifact_id,
        "value_artifact_id": step.value.artifact_id,
    }


def test_commit_staged_after_partial_commit_writes_only_the_rest(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    # A committer died after the content tables: they hold the transaction, the rest do not.
    step = make_step(inputs={"data": ("a" * 32,)})
    bundle = store.stage_execution(step.execution)
    staged = read_bundle(bundle)
    transaction = f"stemma-exec-{step.execution_run_id}"
    for spec in (METRICS, FILE_REFS):
        assert append_rows(store.layout, spec, staged[spec], app_id=transaction)

    assert commit_staged(store.layout, bundle) is True

    assert {spec.name: _count(store, spec) for spec in FUNCTION_STEP_TABLES} == {
        METRICS.name: 1,
        FILE_REFS.name: 1,
        ARTIFACT_INDEX.name: 2,
        ARTIFACT_EDGES.name: 2,
        EXECUTION_EDGES.name: 3,
        EXECUTIONS.name: 1,
    }
    assert len(_log_actions(store, METRICS, "txn")) == 1


def test_a_new_table_is_made_by_its_first_append_in_one_commit_holding_the_transaction(
    store: DeltaStore,
) -> None:
    frame = index_rows(["a" * 32, "b" * 32, "a" * 32])

    assert append_rows(store.layout, ARTIFACT_INDEX, frame, app_id="stemma-exec-first")
    assert append_rows(store.layout, ARTIFACT_INDEX, frame, app_id="stemma-exec-first") is False

    table = DeltaTable(str(ARTIFACT_INDEX.path(store.layout.delta)))
    assert table.version() == 0  # made and filled in one commit, not an empty one then an append
    assert table.transaction_version("stemma-exec-first") == 1
    assert table.metadata().configuration["delta.checkpointInterval"] == "100"
    assert sorted(read_delta(ARTIFACT_INDEX.path(store.layout.delta))["artifact_id"]) == [
        "a" * 32,
        "b" * 32,
    ]


def test_a_table_made_by_another_writer_after_the_check_is_appended_to_without_duplicates(
    store: DeltaStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writer on another machine (one not holding this machine's lock) makes the table between
    # this writer's look for it and its first commit: the commit that would make it fails, and
    # the rows go through an append, which drops the keys already there.
    assert append_rows(store.layout, ARTIFACT_INDEX, index_rows(["a" * 32]), app_id="other")
    looks: list[bool] = []
    real_exists = TablePlace.exists

    def exists_after_the_first_look(place: TablePlace) -> bool:
        looks.append(real_exists(place))
        return len(looks) > 1 and looks[-1]

    monkeypatch.setattr(TablePlace, "exists", exists_after_the_first_look)

    assert append_rows(
        store.layout, ARTIFACT_INDEX, index_rows(["a" * 32, "c" * 32]), app_id="this"
    )

    assert looks == [True, True]  # the first look was told no
    table = DeltaTable(str(ARTIFACT_INDEX.path(store.layout.delta)))
    assert table.version() == 1
    assert table.transaction_version("this") == 1
    ids = read_delta(ARTIFACT_INDEX.path(store.layout.delta))["artifact_id"]
    assert sorted(ids) == ["a" * 32, "c" * 32]
