"""A running step's Executions tab lists its units live: running, staged, then committed.

A step commits its executions when it ends; until then the tab shows the units running now and
those finished (staged), each saying so, then the committed rows once they are committed, with
no unit twice and never an empty table in between.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot

from stemma.core.live import list_states
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient, ExecutionRow
from stemma.tui.client.running_units import UNSEEN_ID
from stemma.tui.screens import StepScreen

from .conftest import drive, row_count, script_running, until

SCRIPT = Path(__file__).with_name("slow_pipeline.py")
LAZY_SCRIPT = Path(__file__).with_name("slow_lazy.py")
UNITS = 12
DEADLINE_SECONDS = 90.0


def _copy_running(root: Path) -> bool:
    states = list_states(root)
    return bool(states) and any(s.number == 1 and s.status == "running" for s in states[0].steps)


def _wait_for_copy_running(root: Path) -> str:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not _copy_running(root):
        assert time.monotonic() < deadline, "the slow step never started"
        time.sleep(0.1)
    return list_states(root)[0].run_id


def _unseen(row: ExecutionRow) -> bool:
    return row.execution_run_id.startswith(UNSEEN_ID.split("{", 1)[0])


def _executions(app: StemmaApp) -> tuple[ExecutionRow, ...]:
    screen = app.screen
    if not isinstance(screen, StepScreen) or screen.view is None:
        return ()
    return screen.view.executions


def test_the_executions_tab_shows_finished_units_before_the_step_ends_then_the_committed_ones(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    with script_running(SCRIPT, root) as process:
        run_id = _wait_for_copy_running(root)
        counts: list[int] = []

        def seen(condition: bool) -> bool:
            counts.append(row_count(app_ref[0], "#executions-table"))
            return condition

        app_ref: list[StemmaApp] = []

        async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
            app_ref.append(app)
            app.open_step(run_id, 1)
            await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")

            def staged_while_running() -> bool:
                rows = _executions(app)
                staged = [e for e in rows if e.stage == "staged"]
                return seen(len(staged) >= 2 and _copy_running(root))

            await until(pilot, staged_while_running, "finished units shown before the step ends")
            facts = str(app.screen.query_one("#step-facts").render())
            assert re.search(r"\d+ executions \((\d+ running, )?\d+ staged\)", facts), facts
            assert any(e.stage == "running" for e in _executions(app)) or "running" in facts

            def committed() -> bool:
                rows = _executions(app)
                return seen(len(rows) == UNITS and all(e.stage == "committed" for e in rows))

            await until(pilot, committed, "every unit committed", seconds=DEADLINE_SECONDS)
            ids = [e.execution_run_id for e in _executions(app)]
            assert len(set(ids)) == UNITS
            assert row_count(app, "#executions-table") == UNITS
            assert f"{UNITS} executions, 0 failed" in str(
                app.screen.query_one("#step-facts").render()
            )

        drive(root, scenario)
        assert process.wait(timeout=120) == 0
    shown = counts[counts.index(next(c for c in counts if c > 0)) :]
    assert 0 not in shown, "the table went empty between the live rows and the committed ones"
    assert all(b >= a for a, b in itertools.pairwise(shown))  # never fewer units


@pytest.mark.parametrize("store", ["sqlite", "delta"])
def test_the_client_lists_a_step_s_staged_units_then_its_committed_ones_with_either_store(
    tmp_path: Path, store: str
) -> None:
    root = tmp_path / "store"
    env = {**os.environ, "STEMMA_STORE": store}
    with script_running(SCRIPT, root, env) as process:
        run_id = _wait_for_copy_running(root)
        client = DashboardClient(root)
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            rows = client.step(run_id, 1).executions
            staged = [e for e in rows if e.stage == "staged"]
            if len(staged) >= 2 and _copy_running(root):
                break
            assert time.monotonic() < deadline, f"no staged units listed: {rows}"
            time.sleep(0.2)
        assert all(e.success for e in staged)
        assert len({e.execution_run_id for e in rows}) == len(rows)
        assert process.wait(timeout=120) == 0
    view = client.step(run_id, 1)  # ended: history's rows, whichever store holds them
    assert view.status == "completed"
    assert len({e.execution_run_id for e in view.executions}) == UNITS
    assert {e.stage for e in view.executions} == {"committed"}
    assert {e.execution_run_id for e in staged} <= {e.execution_run_id for e in view.executions}
    assert view.outputs


def test_a_running_unit_shows_as_running_until_it_is_staged(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with script_running(SCRIPT, root) as process:
        run_id = _wait_for_copy_running(root)
        client = DashboardClient(root)
        deadline = time.monotonic() + DEADLINE_SECONDS
        running: list[ExecutionRow] = []
        while not running:
            # (a unit counted running before its sandbox shows has a stand-in row, "(running 1)",
            # which gives way to the unit's own row: only a row with an execution id can end staged)
            running = [
                e
                for e in client.step(run_id, 1).executions
                if e.stage == "running" and not _unseen(e)
            ]
            assert time.monotonic() < deadline, "no running unit listed"
            time.sleep(0.1)
        [unit] = running  # one worker: one unit at a time
        assert unit.success is None
        while unit.execution_run_id not in {
            e.execution_run_id for e in client.step(run_id, 1).executions if e.stage != "running"
        }:
            assert time.monotonic() < deadline, "the running unit never came back staged"
            time.sleep(0.1)
        assert process.wait(timeout=120) == 0


def test_a_lazy_step_s_running_function_has_a_row_though_it_has_no_sandbox(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(LAZY_SCRIPT.parent)}  # workers import its functions
    with script_running(LAZY_SCRIPT, root, env) as process:
        client = DashboardClient(root)
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            states = list_states(root)
            running = [s for s in states[0].steps if s.running] if states else []
            if running:
                view = client.step(states[0].run_id, running[0].number)
                if view.status == "running" and view.executions:
                    break
            assert time.monotonic() < deadline, "no running lazy step listed a unit"
            time.sleep(0.05)
        [unit] = view.executions
        assert unit.stage == "running"
        assert unit.success is None
        assert process.wait(timeout=120) == 0
