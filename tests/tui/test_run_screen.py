"""The run screen: step names that fit the row, ended runs that say how they ended, filters.

Names: the step column takes the room the count columns leave (80x24 included) and a name
that still does not fit loses its leading dotted parts, never its end. Ended runs: the header
says ``cancelled at force`` (what the orchestrator applied, not what was pressed), the cancel
bar offers no next press, and ``c`` says there is nothing to cancel. Filters: ``x``, ``r`` and
``a`` show failed, running and all steps; ``/`` filters by text; Escape clears before it goes
back.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from pathlib import Path
from typing import cast

from textual.pilot import Pilot
from textual.widgets import Static

from stemma.core.cancel_levels import CancelLevel
from stemma.core.live import (
    RunStatus,
    StepState,
    list_states,
    pending_requests,
    request_cancel,
    write_state,
)
from stemma.tui.app import StemmaApp
from stemma.tui.client.step_tree import step_tree, tree_label
from stemma.tui.screens import RunScreen, RunsScreen
from stemma.tui.widgets.cancel_bar import CancelBar
from stemma.tui.widgets.step_columns import step_columns
from stemma.tui.widgets.tables import table_at

from .conftest import FilledStore, drive, live_state, row_count, script_running, until

SLOW_SCRIPT = Path(__file__).with_name("slow_pipeline.py")
DEADLINE_SECONDS = 90.0


def _deep_steps() -> tuple[StepState, ...]:
    """A chain five deep of steps named as the examples name them, and a failed one."""
    now = dt.datetime.now(dt.UTC).isoformat()
    names = ("generate", "slow_scale", "transform", "metrics", "transform")
    statuses = ("completed", "completed", "running", "running", "pending")
    chain = tuple(
        StepState(
            number=number,
            name=f"example.{name}",
            operation="o",
            status=status,
            total=4,
            succeeded=4 if status == "completed" else 1,
            running=1 if status == "running" else 0,
            started_at=now,
            ended_at=now if status == "completed" else None,
            upstream=(number - 1,) if number else (),
        )
        for number, (name, status) in enumerate(zip(names, statuses, strict=True))
    )
    failed = StepState(
        number=5,
        name="example.fail",
        operation="f",
        status="completed",
        total=4,
        succeeded=3,
        failed=1,
        started_at=now,
        ended_at=now,
        upstream=(0,),
    )
    return (*chain, failed)


def _screen(app: StemmaApp) -> RunScreen:
    return cast(RunScreen, app.screen)


def _step_cells(app: StemmaApp) -> list[dict[str, str]]:
    table = table_at(app.screen, "#steps")
    keys = [str(column.key.value) for column in table.ordered_columns]
    return [
        dict(zip(keys, (str(cell) for cell in table.get_row_at(i)), strict=True))
        for i in range(table.row_count)
    ]


async def _open(app: StemmaApp, pilot: Pilot[None], run_id: str, steps: int) -> RunScreen:
    app.open_run(run_id)
    await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
    await until(pilot, lambda: row_count(app, "#steps") == steps, f"{steps} steps")
    return _screen(app)


def test_step_names_are_whole_at_80x24_or_keep_their_last_part(tmp_path: Path) -> None:
    state = live_state(tmp_path, steps=_deep_steps())

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await _open(app, pilot, state.run_id, 6)
        names = [row["step"] for row in _step_cells(app)]
        assert names == [
            "example.generate",
            "├ example.slow_scale",
            "  └ example.transform",
            "    └ example.metrics",
            "      └ …transform",  # 25 columns whole: it keeps the part that tells it apart
            "└ example.fail",
        ]
        columns = [column.key for column in step_columns(80, step_tree(state.steps))]
        assert columns == ["#", "step", "status", "done", "hit", "fail", "cncl", "run", "time"]

    drive(tmp_path, scenario, size=(80, 24))


def test_a_name_too_long_for_the_row_loses_its_leading_parts_and_keeps_its_indent() -> None:
    long = StepState(
        number=1,
        name="lab.pipelines.preprocessing.normalise",
        operation="o",
        upstream=(0,),
    )
    rows = step_tree([StepState(number=0, name="g", operation="o"), long])
    [_, step, *_] = step_columns(80, rows)
    assert step.width < len(tree_label(rows[1]))
    assert tree_label(rows[1], step.width) == "└ …normalise"
    wide = {column.key: column.width for column in step_columns(160, rows)}
    assert tree_label(rows[1], wide["step"]) == "└ lab.pipelines.preprocessing.normalise"
    assert "progress" in wide  # names whole first, then the progress bar


def test_x_r_and_a_show_failed_running_and_all_steps_and_slash_filters_by_text(
    tmp_path: Path,
) -> None:
    state = live_state(tmp_path, steps=_deep_steps())

    def numbers(app: StemmaApp) -> list[int]:
        return list(_screen(app).numbers)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        screen = await _open(app, pilot, state.run_id, 6)
        await pilot.press("x")  # a completed step with a failed unit counts as failed
        await until(pilot, lambda: numbers(app) == [5], "the step with a failure")
        facts = screen.query_one("#run-facts", Static)
        assert "showing failed" in str(facts.render())
        await pilot.press("r")
        await until(pilot, lambda: numbers(app) == [2, 3], "the running steps")
        await pilot.press("r")  # again: every step
        await until(pilot, lambda: numbers(app) == [0, 1, 2, 3, 4, 5], "every step")
        await pilot.press("x", "a")
        await until(pilot, lambda: numbers(app) == [0, 1, 2, 3, 4, 5], "every step again")
        await pilot.press("slash", *"transform")
        await until(pilot, lambda: numbers(app) == [2, 4], "the two transforms")
        await pilot.press("enter")  # back to the table, the filter kept
        await until(pilot, lambda: table_at(screen, "#steps").has_focus, "the table")
        await pilot.press("escape")  # clears the filter; the screen stays
        await until(pilot, lambda: len(numbers(app)) == 6, "the filter cleared")
        assert isinstance(app.screen, RunScreen)
        await pilot.press("slash", *"!example\\.(gen|trans)")
        await until(pilot, lambda: numbers(app) == [1, 3, 5], "the inverted regex")
        await pilot.press("escape", "escape")  # clear, then back
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), "the runs list")

    drive(tmp_path, scenario, size=(80, 24))


def _bar(app: StemmaApp) -> CancelBar:
    return app.screen.query_one(CancelBar)


def _toasts(app: StemmaApp) -> str:
    """Every notification shown (run_test draws none: they are read where the app keeps them)."""
    notices = app._notifications  # pyright: ignore[reportPrivateUsage]
    return " ".join(notice.message for notice in notices)


def test_a_run_that_ended_at_force_after_a_hard_press_says_so_and_c_asks_nothing(
    tmp_path: Path,
) -> None:
    state = live_state(tmp_path)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        screen = await _open(app, pilot, state.run_id, 2)
        await pilot.press("c", "c", "c")  # graceful, force, hard: all asked while it ran
        await until(pilot, lambda: len(pending_requests(tmp_path, state.run_id)) == 3, "3 asks")
        # Its orchestrator ended it at force, before it read the hard request.
        now = dt.datetime.now(dt.UTC).isoformat()
        ended = state.settled(RunStatus.CANCELLED, ended_at=now)
        write_state(tmp_path, dataclasses.replace(ended, cancel_level=2, heartbeat=now))
        facts = screen.query_one("#run-facts", Static)
        await until(
            pilot, lambda: str(facts.render()).startswith("cancelled at force"), "how it ended"
        )
        assert not _bar(app).display  # no "3/3 asked: hard", no "press c again"
        await pilot.press("c")
        await until(pilot, lambda: "nothing to cancel" in _toasts(app), "nothing to cancel")
        assert "run cancelled at force: nothing to cancel" in _toasts(app)
        assert len(pending_requests(tmp_path, state.run_id)) == 3
        assert not _bar(app).display

    drive(tmp_path, scenario)


def _run_cancelled_at_force(root: Path) -> str:
    """Run the slow pipeline, cancel it at force once its slow step runs, wait for its end."""
    with script_running(SLOW_SCRIPT, root) as process:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            states = list_states(root) if (root / "runs").is_dir() else []
            if states and len(states[0].steps) == 2 and states[0].steps[1].status == "running":
                break
            assert time.monotonic() < deadline, "the slow step never started"
            time.sleep(0.1)  # another process: polling is all there is
        request_cancel(root, states[0].run_id, CancelLevel.FORCE)
        process.wait(timeout=DEADLINE_SECONDS)
    [state] = list_states(root)
    assert (state.status, state.cancel_level) == (RunStatus.CANCELLED, 2)
    return state.run_id


def test_a_real_run_cancelled_at_force_says_so_and_c_says_there_is_nothing_to_cancel(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    run_id = _run_cancelled_at_force(root)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        screen = await _open(app, pilot, run_id, 2)
        facts = screen.query_one("#run-facts", Static)
        await until(pilot, lambda: "cancelled at force" in str(facts.render()), "the header")
        assert not _bar(app).display
        await pilot.press("c")
        await until(pilot, lambda: "nothing to cancel" in _toasts(app), "nothing to cancel")
        assert pending_requests(root, run_id) == [
            r for r in pending_requests(root, run_id) if r.level == CancelLevel.FORCE
        ]  # only the request that cancelled it: the press asked for nothing
        assert not _bar(app).display

    drive(root, scenario)


def test_a_real_finished_run_says_how_it_ended_and_c_says_there_is_nothing_to_cancel(
    filled: FilledStore,
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        screen = await _open(app, pilot, filled.run_id, 4)
        facts = screen.query_one("#run-facts", Static)
        await until(pilot, lambda: str(facts.render()).startswith("failed"), "the header")
        await pilot.press("c")
        await until(pilot, lambda: "run failed: nothing to cancel" in _toasts(app), "the toast")
        assert not _bar(app).display
        assert pending_requests(filled.root, filled.run_id) == []

    drive(filled.root, scenario)
