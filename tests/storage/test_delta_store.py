from __future__ import annotations

import datetime as dt
from pathlib import Path

from stemma.core.records import StepStatus
from stemma.core.store import Store, open_store
from stemma.storage import DeltaStore, executions, steps

from .conftest import FunctionStepFactory, commit_function_step


def test_delta_store_construction_does_no_io(tmp_path: Path) -> None:
    store = DeltaStore(tmp_path / "absent")

    assert isinstance(store, Store)
    assert store.layout.root == tmp_path / "absent"
    assert not (tmp_path / "absent").exists()


def test_open_store_delta_kind_returns_delta_store(tmp_path: Path) -> None:
    assert isinstance(open_store(tmp_path, kind="delta"), DeltaStore)


def test_completed_on_empty_store_returns_nothing(store: DeltaStore) -> None:
    assert store.completed(["0" * 32]) == {}
    assert store.latest_by_name("train") is None
    assert not store.layout.delta.exists()


def test_completed_function_step_reads_back_with_value_and_output(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    step = make_step(value={"accuracy": 0.93})
    commit_function_step(store, step)

    found = store.completed([step.fingerprint, "f" * 32])

    assert list(found) == [step.fingerprint]
    record = found[step.fingerprint]
    assert record.status is StepStatus.COMPLETED
    assert record.value == {"accuracy": 0.93}
    assert record.output_path == step.output_path
    assert record.output_artifact_id == step.output.artifact_id
    assert record.step_run_id == step.step_run_id
    assert record.run_id == step.final.pipeline_run_id
    assert record.config == {"lr": 0.1}
    assert record.timestamp == step.final.timestamp


def test_failed_function_step_is_not_completed(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    step = make_step(error="Traceback: boom")
    commit_function_step(store, step)

    assert store.completed([step.fingerprint]) == {}
    assert store.latest_by_name("train") is None
    log = steps(store.layout.root)
    assert log.get_column("status").to_list() == ["running", "failed"]
    final = log.row(1, named=True)
    assert (final["total_count"], final["succeeded_count"], final["failed_count"]) == (1, 0, 1)
    assert final["error"] == "Traceback: boom"
    assert executions(store.layout.root).get_column("success").to_list() == [False]


def test_steps_log_records_running_then_completed_with_counts(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    step = make_step(seconds=3.5)
    commit_function_step(store, step)

    log = steps(store.layout.root, name="train")
    assert log.get_column("status").to_list() == ["running", "completed"]
    assert log.get_column("step_run_id").unique().to_list() == [step.step_run_id]
    final = log.row(1, named=True)
    assert (final["total_count"], final["succeeded_count"], final["failed_count"]) == (1, 1, 0)
    assert final["duration_seconds"] == 3.5
    assert final["output_roles"] == ["output", "value"]


def test_completed_returns_latest_of_each_fingerprint(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    t0 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    first = make_step(at=t0, value=1)
    second = make_step(at=t0 + dt.timedelta(hours=1), value=2)
    other = make_step("eval", at=t0, value=3)
    for step in (second, first, other):
        commit_function_step(store, step)

    found = store.completed([first.fingerprint, other.fingerprint])

    assert first.fingerprint == second.fingerprint
    assert found[first.fingerprint].value == 2
    assert found[first.fingerprint].step_run_id == second.step_run_id
    assert found[other.fingerprint].value == 3


def test_latest_by_name_ignores_other_fingerprints_and_failures(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    t0 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    older = make_step(config={"lr": 0.1}, at=t0, value="old")
    newer = make_step(config={"lr": 0.2}, at=t0 + dt.timedelta(hours=1), value="new")
    failed = make_step(at=t0 + dt.timedelta(hours=2), error="boom")
    for step in (older, newer, failed):
        commit_function_step(store, step)

    latest = store.latest_by_name("train")

    assert latest is not None
    assert latest.fingerprint == newer.fingerprint
    assert latest.value == "new"
    assert store.latest_by_name("absent") is None
