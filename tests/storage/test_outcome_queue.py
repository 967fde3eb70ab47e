"""OutcomeQueue on a real DeltaStore: every attempt's running event is recorded exactly once."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl
import pytest

from stemma.core.outcome_queue import OutcomeQueue
from stemma.core.records import StepOutcome, StepStarted
from stemma.storage import DeltaStore, steps
from stemma.storage.schemas import STEPS
from stemma.storage.staging import read_bundle

StartedFactory = Callable[..., StepStarted]
OutcomeFactory = Callable[..., StepOutcome]


class FaultyStore(DeltaStore):
    """A real store whose staging or event append fails the first time it is asked."""

    fail_staging = False
    fail_append = False

    def stage_outcome(self, outcome: StepOutcome) -> Path:
        if self.fail_staging:
            self.fail_staging = False
            raise OSError("no space left on device")
        return super().stage_outcome(outcome)

    def record_started_events(self, events: Sequence[StepStarted]) -> None:
        if self.fail_append:
            self.fail_append = False
            raise OSError("the steps table is unreachable")
        super().record_started_events(events)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _statuses(root: Path, step_run_id: str) -> list[str]:
    rows = steps(root).filter(pl.col("step_run_id") == step_run_id).sort("timestamp")
    return rows["status"].to_list()


def _opened(store: DeltaStore, make_started: StartedFactory) -> tuple[OutcomeQueue, StepStarted]:
    """A queue on ``store`` with one attempt begun just now."""
    queue = OutcomeQueue(store)
    started = make_started(at=_now())
    queue.begin(started)
    return queue, started


def _staged_statuses(queue: OutcomeQueue) -> list[str]:
    ((_, bundle),) = queue._staged  # pyright: ignore[reportPrivateUsage]
    return read_bundle(bundle)[STEPS]["status"].to_list()


def test_a_quick_attempt_stages_its_running_event_with_its_final_one(
    tmp_path: Path, make_started: StartedFactory, make_outcome: OutcomeFactory
) -> None:
    queue, started = _opened(DeltaStore(tmp_path), make_started)
    assert queue.record_open(older_than=60) == 0  # not open long enough to be appended alone
    queue.stage(started.step.fingerprint, make_outcome(started))
    assert _staged_statuses(queue) == ["running", "completed"]
    assert queue.commit() == {started.step.fingerprint: None}
    assert _statuses(tmp_path, started.step_run_id) == ["running", "completed"]


def test_a_long_attempt_is_appended_alone_and_its_bundle_does_not_repeat_it(
    tmp_path: Path, make_started: StartedFactory, make_outcome: OutcomeFactory
) -> None:
    queue, started = _opened(DeltaStore(tmp_path), make_started)
    assert queue.record_open(older_than=0) == 1
    assert _statuses(tmp_path, started.step_run_id) == ["running"]
    queue.stage(started.step.fingerprint, make_outcome(started))
    assert _staged_statuses(queue) == ["completed"]
    queue.commit()
    assert _statuses(tmp_path, started.step_run_id) == ["running", "completed"]


def test_an_attempt_whose_staging_fails_stays_open_for_the_next_append(
    tmp_path: Path, make_started: StartedFactory, make_outcome: OutcomeFactory
) -> None:
    store = FaultyStore(tmp_path)
    store.fail_staging = True
    queue, started = _opened(store, make_started)
    with pytest.raises(OSError, match="no space"):
        queue.stage(started.step.fingerprint, make_outcome(started))
    assert queue.record_open(older_than=0) == 1
    assert _statuses(tmp_path, started.step_run_id) == ["running"]


def test_events_whose_append_fails_go_with_their_bundles_instead(
    tmp_path: Path, make_started: StartedFactory, make_outcome: OutcomeFactory
) -> None:
    store = FaultyStore(tmp_path)
    store.fail_append = True
    queue, started = _opened(store, make_started)
    assert queue.record_open(older_than=0) == 0  # logged; the event is open again
    queue.stage(started.step.fingerprint, make_outcome(started))
    assert _staged_statuses(queue) == ["running", "completed"]
    queue.commit()
    assert _statuses(tmp_path, started.step_run_id) == ["running", "completed"]
