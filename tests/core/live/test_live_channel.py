"""The live channel's pieces without a pipeline: state files, staleness, requests, the monitor."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import pathlib
import socket
import threading

import pytest

from stemma.core.cancel_levels import CancelLevel
from stemma.core.live import (
    RunState,
    RunStatus,
    list_states,
    pending_requests,
    read_state,
    request_cancel,
    write_state,
)
from stemma.core.live.channel import LiveChannel
from stemma.core.live.monitor import RunMonitor


def _monitor(run_id: str = "demo_20261129_000000_abcdef12") -> RunMonitor:
    return RunMonitor(run_id=run_id, name="demo", root="/r", backend="local")


def test_state_round_trips_through_its_file(tmp_path: pathlib.Path) -> None:
    monitor = _monitor()
    monitor.step_submitted(0, "generate", "example.generate")
    monitor.step_started(0)
    monitor.units_planned(0, total=10, cached=3)
    monitor.units_sent(0, 7)
    monitor.units_back(0, succeeded=4, failed=1)
    write_state(tmp_path, monitor.snapshot())
    state = read_state(tmp_path, "demo_20261129_000000_abcdef12")
    step = state.steps[0]
    # (cache hits are succeeded units: 3 cached + 4 that ran)
    assert (step.total, step.cached, step.succeeded, step.failed, step.running) == (10, 3, 7, 1, 2)
    assert step.done == 8
    assert state.status is RunStatus.RUNNING
    assert state.pid == os.getpid()


def test_a_run_whose_heartbeat_stopped_reads_as_stale(tmp_path: pathlib.Path) -> None:
    state = _monitor().snapshot()
    old = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    write_state(tmp_path, dataclasses.replace(state, heartbeat=old.isoformat()))
    assert read_state(tmp_path, state.run_id).status is RunStatus.STALE
    assert read_state(tmp_path, state.run_id, stale_after=3600).status is RunStatus.RUNNING


def test_a_run_whose_process_is_gone_on_this_host_reads_as_stale(tmp_path: pathlib.Path) -> None:
    state = dataclasses.replace(_monitor().snapshot(), pid=2**22 + 7, host=socket.gethostname())
    write_state(tmp_path, state)
    assert read_state(tmp_path, state.run_id).status is RunStatus.STALE


def test_final_snapshot_is_cancelled_after_a_cancel_and_failed_after_a_failure() -> None:
    monitor = _monitor()
    monitor.step_submitted(0, "a", "op")
    monitor.step_finished(0, "failed")
    assert monitor.snapshot(final=True).status is RunStatus.FAILED
    monitor.cancel_level(2)
    final = monitor.snapshot(final=True)
    assert final.status is RunStatus.CANCELLED
    assert final.ended_at is not None


def test_list_states_is_newest_first_and_ignores_garbage(tmp_path: pathlib.Path) -> None:
    first = dataclasses.replace(_monitor("a_1_00000001").snapshot(), started_at="2026-01-01")
    second = dataclasses.replace(_monitor("b_1_00000002").snapshot(), started_at="2026-02-01")
    write_state(tmp_path, first)
    write_state(tmp_path, second)
    (tmp_path / "runs" / "junk").mkdir()
    (tmp_path / "runs" / "junk" / "state.json").write_text("{not json")
    assert [s.run_id for s in list_states(tmp_path)] == ["b_1_00000002", "a_1_00000001"]


def test_request_cancel_needs_an_existing_run_and_a_known_level(tmp_path: pathlib.Path) -> None:
    with pytest.raises(FileNotFoundError, match="stemma runs"):
        request_cancel(tmp_path, "nope", 1)
    write_state(tmp_path, _monitor().snapshot())
    with pytest.raises(ValueError, match=r"use 1 \(graceful\), 2 \(force\) or 3 \(hard\)"):
        request_cancel(tmp_path, "demo_20261129_000000_abcdef12", 7)
    request_cancel(tmp_path, "demo_20261129_000000_abcdef12", "force")
    request_cancel(tmp_path, "demo_20261129_000000_abcdef12", 1)
    levels = [r.level for r in pending_requests(tmp_path, "demo_20261129_000000_abcdef12")]
    assert sorted(levels) == [CancelLevel.GRACEFUL, CancelLevel.FORCE]


def test_channel_hands_the_highest_new_request_to_the_pipeline_once(
    tmp_path: pathlib.Path,
) -> None:
    monitor = _monitor()
    seen: list[CancelLevel] = []
    got = threading.Event()

    def on_cancel(level: CancelLevel) -> None:
        seen.append(level)
        got.set()

    channel = LiveChannel(tmp_path, monitor, on_cancel, write_seconds=0.25)
    channel.start()
    try:
        request_cancel(tmp_path, monitor.snapshot().run_id, 2)
        assert got.wait(2), "a request must be noticed within a second"
        got.clear()
        assert not got.wait(0.6)  # the same request is not handed over twice
    finally:
        channel.stop()
    assert seen == [CancelLevel.FORCE]
    assert read_state(tmp_path, monitor.snapshot().run_id).ended_at is not None


def test_run_state_rejects_a_file_that_is_not_a_state() -> None:
    with pytest.raises(ValueError, match="not a stemma run state file"):
        RunState.from_json('{"steps": []}')


def test_channel_ignores_requests_left_from_an_earlier_life_of_the_run(
    tmp_path: pathlib.Path,
) -> None:
    monitor = _monitor()
    write_state(tmp_path, monitor.snapshot())
    request_cancel(tmp_path, monitor.run_id, 1)  # the run was cancelled once, then resumed
    seen: list[CancelLevel] = []
    got = threading.Event()

    def on_cancel(level: CancelLevel) -> None:
        seen.append(level)
        got.set()

    channel = LiveChannel(tmp_path, monitor, on_cancel, write_seconds=0.25)
    channel.start()
    try:
        assert not got.wait(0.8)  # the old request is history
        request_cancel(tmp_path, monitor.run_id, 1)
        assert got.wait(2)
    finally:
        channel.stop()
    assert seen == [CancelLevel.GRACEFUL]
