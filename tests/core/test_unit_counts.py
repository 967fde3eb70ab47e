"""One definition of a step's unit counts: the live state, the event log and readers agree."""

from __future__ import annotations

import datetime as dt
import os
import socket

from stemma.core.execution_records import StepEvent
from stemma.core.live import RunState, RunStatus, StepState
from stemma.core.live.monitor import RunMonitor
from stemma.core.records import StepStatus
from stemma.core.unit_counts import UnitCounts


def _event(**fields: object) -> StepEvent:
    base: dict[str, object] = {
        "step_run_id": "s1",
        "step_spec_id": "f1",
        "pipeline_run_id": "demo_20261201_000000_abcdef12",
        "step_number": 1,
        "step_name": "copy",
        "status": StepStatus.CANCELLED,
        "operation": "example.copy",
        "version": "v1",
        "params": {},
        "backend": "local",
        "timestamp": dt.datetime.now(dt.UTC),
    }
    return StepEvent(**{**base, **fields})  # pyright: ignore[reportArgumentType]


def test_unit_counts_settled_cancel_what_was_running_or_pending() -> None:
    live = UnitCounts(total=20, succeeded=6, cached=2, failed=1, cancelled=3, running=4)
    assert (live.done, live.pending, live.executed) == (10, 6, 5)
    final = live.settled()
    assert (final.total, final.succeeded, final.failed, final.cancelled, final.running) == (
        20,
        6,
        1,
        13,
        0,
    )
    assert final.succeeded + final.failed + final.cancelled == final.total


def test_unit_counts_of_an_event_read_cancelled_units_from_its_metadata() -> None:
    event = _event(
        total_count=20,
        succeeded_count=8,
        failed_count=0,
        metadata={"cancelled_units": 12, "execution_cache_hits": 3},
    )
    counts = UnitCounts.of_event(event)
    assert (counts.total, counts.succeeded, counts.cached, counts.cancelled) == (20, 8, 3, 12)


def test_unit_counts_of_an_event_written_before_total_counted_cancelled_units_add_up() -> None:
    # (such events had total_count = succeeded + failed)
    event = _event(total_count=8, succeeded_count=8, metadata={"cancelled_units": 12})
    assert UnitCounts.of_event(event).total == 20


def test_unit_counts_of_a_step_level_hit_are_all_cached() -> None:
    event = _event(
        status=StepStatus.COMPLETED,
        total_count=5,
        succeeded_count=5,
        metadata={"cache": "step"},
    )
    counts = UnitCounts.of_event(event)
    assert (counts.total, counts.succeeded, counts.cached) == (5, 5, 5)


def _monitor() -> RunMonitor:
    return RunMonitor(
        run_id="demo_20261201_000000_abcdef12", name="demo", root="/r", backend="local"
    )


def test_monitor_hard_cancel_settles_running_steps_instead_of_leaving_them_running() -> None:
    monitor = _monitor()
    monitor.step_submitted(0, "copy", "example.copy")
    monitor.step_submitted(1, "score", "example.score")
    monitor.step_started(0)
    monitor.units_planned(0, total=20, cached=2)
    monitor.units_sent(0, 6)
    monitor.units_back(0, succeeded=3, failed=1)
    monitor.cancel_level(3)
    state = monitor.snapshot()
    assert state.status is RunStatus.CANCELLED
    copy, score = state.steps
    assert (copy.status, copy.running, copy.ended_at is not None) == ("cancelled", 0, True)
    assert (copy.total, copy.succeeded, copy.cached, copy.failed, copy.cancelled) == (
        20,
        5,
        2,
        1,
        14,
    )
    assert (score.status, score.total) == ("skipped", 0)


def test_monitor_step_finished_takes_the_final_counts_of_the_step_result() -> None:
    monitor = _monitor()
    monitor.step_submitted(0, "copy", "example.copy")
    monitor.units_planned(0, total=20, cached=0)
    monitor.units_sent(0, 8)
    monitor.units_back(0, succeeded=6, failed=0, cancelled=2)
    final = UnitCounts(total=20, succeeded=6, failed=0, cancelled=14)
    monitor.step_finished(0, "cancelled", counts=final)
    (step,) = monitor.snapshot().steps
    assert step.counts == final


def _running_state(heartbeat: dt.datetime, pid: int) -> RunState:
    step = StepState(
        number=0,
        name="copy",
        operation="example.copy",
        status="running",
        total=20,
        succeeded=5,
        running=2,
        started_at=(heartbeat - dt.timedelta(seconds=10)).isoformat(),
    )
    return RunState(
        run_id="demo_20261201_000000_abcdef12",
        name="demo",
        status=RunStatus.RUNNING,
        pid=pid,
        host=socket.gethostname(),
        root="/r",
        backend="local",
        started_at=step.started_at or "",
        heartbeat=heartbeat.isoformat(),
        steps=(step,),
    )


def test_a_stale_run_shows_its_running_steps_stale_with_nothing_running() -> None:
    beat = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    seen = _running_state(beat, os.getpid()).seen_at(dt.datetime.now(dt.UTC))
    assert seen.status is RunStatus.STALE
    (step,) = seen.steps
    assert (step.status, step.running, step.ended_at) == ("stale", 0, beat.isoformat())


def test_a_live_run_keeps_its_running_steps_running() -> None:
    now = dt.datetime.now(dt.UTC)
    (step,) = _running_state(now, os.getpid()).seen_at(now).steps
    assert (step.status, step.running) == ("running", 2)
