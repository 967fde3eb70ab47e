"""The runs poll re-reads only what changed, and still sees every change: a running run's
progress, its end, a new run, a removed one (real state files, the public client)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

from stemma.core.live import RunStatus, StepState, write_state
from stemma.core.live.state import STATE_FILE
from stemma.tui.client import DashboardClient

from .conftest import live_state

RUNNING = "live_20261129_120000_0000abcd"
DONE = "done_20261129_110000_0000dcba"
HOUR_NS = 3_600 * 10**9


def _step(state_steps: tuple[StepState, ...], succeeded: int) -> tuple[StepState, ...]:
    first, running = state_steps
    return (first, dataclasses.replace(running, succeeded=succeeded))


def _touch(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns))


def _root_with_two_runs(root: Path) -> DashboardClient:
    live_state(root, RUNNING)
    live_state(root, DONE, status=RunStatus.COMPLETED)
    return DashboardClient(root)


def _age_the_runs_folder(root: Path) -> None:
    """The runs folder last changed an hour ago: its listing is kept while its time stays."""
    _touch(root / "runs", time.time_ns() - HOUR_NS)


def test_runs_polled_with_nothing_changed_are_the_same_row_objects(tmp_path: Path) -> None:
    # The runs list repaints only the rows that are new objects: a running run's row must not
    # be a new one each second when nothing about it changed.
    client = _root_with_two_runs(tmp_path)
    _age_the_runs_folder(tmp_path)
    first = client.runs()
    again = client.runs()
    assert {row.run_id for row in first} == {RUNNING, DONE}
    assert again == first
    assert all(new is old for new, old in zip(again, first, strict=True))
    assert again is not first  # a new list: the caller may keep the last one to compare


def test_a_running_runs_new_state_shows_at_the_next_poll(tmp_path: Path) -> None:
    client = _root_with_two_runs(tmp_path)
    _age_the_runs_folder(tmp_path)
    before = {row.run_id: row for row in client.runs()}
    state = live_state(tmp_path, RUNNING)
    path = tmp_path / "runs" / RUNNING / STATE_FILE
    write_state(tmp_path, dataclasses.replace(state, steps=_step(state.steps, 9)))
    _touch(path, time.time_ns() + 10**9)  # a new modification time, whatever the clock's tick
    after = {row.run_id: row for row in client.runs()}
    assert before[RUNNING].steps_done == after[RUNNING].steps_done == 1
    assert after[RUNNING] is not before[RUNNING]
    assert after[DONE] is before[DONE]
    state_of_step = client.run(RUNNING).steps[1]
    assert state_of_step.succeeded == 9


def test_a_run_that_ended_shows_ended_at_the_next_poll(tmp_path: Path) -> None:
    client = _root_with_two_runs(tmp_path)
    _age_the_runs_folder(tmp_path)
    assert {row.run_id: row.status for row in client.runs()}[RUNNING] is RunStatus.RUNNING
    live_state(tmp_path, RUNNING, status=RunStatus.FAILED)
    _touch(tmp_path / "runs" / RUNNING / STATE_FILE, time.time_ns() + 10**9)
    assert {row.run_id: row.status for row in client.runs()} == {
        RUNNING: RunStatus.FAILED,
        DONE: RunStatus.COMPLETED,
    }


def test_a_new_run_and_a_removed_run_show_at_the_next_poll(tmp_path: Path) -> None:
    client = _root_with_two_runs(tmp_path)
    _age_the_runs_folder(tmp_path)
    client.runs()
    client.runs()  # the listing is kept from here on, while the folder's time stays
    newer = "newer_20261129_130000_00001234"
    live_state(tmp_path, newer)  # a new run directory: the folder's time moves
    assert {row.run_id for row in client.runs()} == {newer, RUNNING, DONE}
    shutil.rmtree(tmp_path / "runs" / DONE)
    assert {row.run_id for row in client.runs()} == {newer, RUNNING}


def test_a_run_added_within_the_folders_last_tick_is_not_missed(tmp_path: Path) -> None:
    # File times tick coarsely: a run directory made just after a listing, in the same tick,
    # leaves the folder's time as it was. A recent time is never trusted to mean "no change".
    client = _root_with_two_runs(tmp_path)
    runs = tmp_path / "runs"
    recent = time.time_ns() - 10**8
    _touch(runs, recent)
    client.runs()
    newer = "newer_20261129_130000_00001234"
    live_state(tmp_path, newer)
    _touch(runs, recent)  # as if the new directory landed in the same tick
    assert newer in {row.run_id for row in client.runs()}


def test_an_unchanged_finished_runs_file_is_not_read_again(tmp_path: Path) -> None:
    # What makes the poll cheap: a finished run's file (written for the last time) and a
    # running run's unchanged file are not parsed again. Garbage with the old time stays unread.
    client = _root_with_two_runs(tmp_path)
    _age_the_runs_folder(tmp_path)
    first = client.runs()
    for run_id in (RUNNING, DONE):
        path = tmp_path / "runs" / run_id / STATE_FILE
        stamp = path.stat().st_mtime_ns
        path.write_text("not json")
        _touch(path, stamp)
    assert client.runs() == first
