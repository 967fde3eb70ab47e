"""A run's steps as a tree by their dependencies: the live state carries each step's upstream,
history rebuilds it for finished runs, and the run screen indents by it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import cast

from textual.pilot import Pilot
from textual.widgets import DataTable

from stemma.core.live import RunState, StepState, read_state
from stemma.core.live.monitor import RunMonitor
from stemma.core.store import open_run_store
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.client.step_tree import step_tree, tree_label, upstream_from_events
from stemma.tui.screens import RunScreen

from .conftest import FilledStore, drive, row_count, until

FILLED_UPSTREAM = {0: (), 1: (0,), 2: (1,), 3: (0,)}
"""generate; transform reads generate; metrics reads transform; fail reads generate."""


def _step(number: int, *upstream: int) -> StepState:
    return StepState(number=number, name=f"s{number}", operation="o", upstream=upstream)


def test_step_tree_hangs_each_step_under_its_newest_upstream_in_depth_first_order() -> None:
    steps = [_step(0), _step(1, 0), _step(2, 1), _step(3, 0), _step(4, 2, 3), _step(5)]
    rows = step_tree(steps)
    assert [(r.step.number, r.depth) for r in rows] == [
        (0, 0), (1, 1), (2, 2), (3, 1), (4, 2), (5, 0)
    ]  # fmt: skip
    assert [tree_label(r) for r in rows] == ["s0", "├ s1", "  └ s2", "└ s3", "  └ s4", "s5"]


def test_step_tree_treats_unknown_or_later_upstreams_as_roots() -> None:
    rows = step_tree([_step(2, 7), _step(3, 5), _step(5)])
    assert [(r.step.number, r.depth) for r in rows] == [(2, 0), (3, 0), (5, 0)]


def test_a_state_file_written_before_upstream_existed_reads_with_no_upstream() -> None:
    step = {"number": 0, "name": "a", "operation": "o", "status": "running"}
    old = {
        "run_id": "old_20261129_120000_00000001",
        "name": "old",
        "status": "running",
        "pid": 1,
        "host": "h",
        "root": "/r",
        "backend": "local",
        "started_at": "2026-11-29T12:00:00+00:00",
        "heartbeat": "2026-11-29T12:00:00+00:00",
        "steps": [step],
    }
    [read] = RunState.from_json(json.dumps(old)).steps
    assert read.upstream == ()


def test_the_monitor_s_snapshot_round_trips_each_step_s_upstream_through_json() -> None:
    monitor = RunMonitor(run_id="m_20261129_120000_00000001", name="m", root="/r", backend="local")
    monitor.step_submitted(0, "a", "o")
    monitor.step_submitted(1, "b", "o", upstream=(0,))
    state = monitor.snapshot()
    assert RunState.from_json(state.to_json()) == state
    assert [s.upstream for s in state.steps] == [(), (0,)]


def test_a_real_run_records_upstream_in_its_state_file_and_history_agrees(
    filled: FilledStore,
) -> None:
    state = read_state(filled.root, filled.run_id)
    assert {s.number: s.upstream for s in state.steps} == FILLED_UPSTREAM
    events = open_run_store(filled.root).step_events(filled.run_id)
    assert upstream_from_events(events) == FILLED_UPSTREAM


def test_a_finished_run_without_a_state_file_gets_its_tree_from_history(
    filled: FilledStore, tmp_path: Path
) -> None:
    root = tmp_path / "store"
    shutil.copytree(filled.root, root)
    shutil.rmtree(root / "runs")
    view = DashboardClient(root).run(filled.run_id)
    assert view.state is None
    assert {s.number: s.upstream for s in view.steps} == FILLED_UPSTREAM


def test_the_run_screen_draws_the_steps_as_an_indented_tree(filled: FilledStore) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run(filled.run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
        await until(pilot, lambda: row_count(app, "#steps") == 4, "four steps")
        table = cast("DataTable[object]", app.screen.query_one("#steps", DataTable))
        names = [str(table.get_row_at(i)[1]) for i in range(4)]
        assert names == [
            "example.generate",
            "├ example.transform",
            "  └ example.metrics",
            "└ example.fail",
        ]
        await pilot.press("down", "down", "down", "enter")  # the cursor follows tree order
        screen = app.screen
        assert getattr(screen, "number", None) == 3

    drive(filled.root, scenario)
