from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from stemma.core.records import StepOutcome, StepStarted, StepStatus
from stemma.core.store import Store, open_store
from stemma.storage import DeltaStore, executions, steps

StartedFactory = Callable[..., StepStarted]
OutcomeFactory = Callable[..., StepOutcome]


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


def test_record_outcome_success_is_completed_with_value_and_output(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    outcome = make_outcome(value={"accuracy": 0.93})
    store.record_started(outcome.started)
    store.record_outcome(outcome)

    fingerprint = outcome.started.step.fingerprint
    found = store.completed([fingerprint, "f" * 32])

    assert list(found) == [fingerprint]
    record = found[fingerprint]
    assert outcome.output is not None
    assert record.status is StepStatus.COMPLETED
    assert record.value == {"accuracy": 0.93}
    assert record.output_path == outcome.output.relative_path
    assert record.output_artifact_id == outcome.output.artifact_id
    assert record.step_run_id == outcome.started.step_run_id
    assert record.run_id == outcome.started.run_id
    assert record.config == {"lr": 0.1}
    assert record.timestamp == outcome.ended_at


def test_record_outcome_failure_is_not_completed(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    outcome = make_outcome(error="Traceback: boom")
    store.record_started(outcome.started)
    store.record_outcome(outcome)

    assert store.completed([outcome.started.step.fingerprint]) == {}
    log = steps(store.layout.root)
    assert log.get_column("status").to_list() == ["running", "failed"]
    final = log.row(1, named=True)
    assert (final["total_count"], final["succeeded_count"], final["failed_count"]) == (1, 0, 1)
    assert final["error"] == "Traceback: boom"
    assert executions(store.layout.root).get_column("success").to_list() == [False]


def test_steps_log_records_running_then_completed_with_counts(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    outcome = make_outcome(seconds=3.5)
    store.record_started(outcome.started)
    store.record_outcome(outcome)

    log = steps(store.layout.root, name="train")
    assert log.get_column("status").to_list() == ["running", "completed"]
    assert log.get_column("step_run_id").unique().to_list() == [outcome.started.step_run_id]
    final = log.row(1, named=True)
    assert (final["total_count"], final["succeeded_count"], final["failed_count"]) == (1, 1, 0)
    assert final["duration_seconds"] == 3.5
    assert final["output_roles"] == ["output", "value"]


def test_completed_returns_latest_of_each_fingerprint(
    store: DeltaStore, make_started: StartedFactory, make_outcome: OutcomeFactory
) -> None:
    t0 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    first = make_outcome(make_started(at=t0), value=1)
    second = make_outcome(make_started(at=t0 + dt.timedelta(hours=1)), value=2)
    other = make_outcome(make_started("eval", at=t0), value=3)
    for outcome in (second, first, other):
        store.record_outcome(outcome)

    found = store.completed([first.started.step.fingerprint, other.started.step.fingerprint])

    assert first.started.step.fingerprint == second.started.step.fingerprint
    assert found[first.started.step.fingerprint].value == 2
    assert found[other.started.step.fingerprint].value == 3


def test_latest_by_name_ignores_other_fingerprints_and_failures(
    store: DeltaStore, make_started: StartedFactory, make_outcome: OutcomeFactory
) -> None:
    t0 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    older = make_outcome(make_started(config={"lr": 0.1}, at=t0), value="old")
    newer = make_outcome(
        make_started(config={"lr": 0.2}, at=t0 + dt.timedelta(hours=1)), value="new"
    )
    failed = make_outcome(make_started(at=t0 + dt.timedelta(hours=2)), error="boom")
    for outcome in (older, newer, failed):
        store.record_outcome(outcome)

    latest = store.latest_by_name("train")

    assert latest is not None
    assert latest.fingerprint == newer.started.step.fingerprint
    assert latest.value == "new"
    assert store.latest_by_name("absent") is None
