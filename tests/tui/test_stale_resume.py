"""`r` on a stale run's screen resumes it (as `stemma resume` does); elsewhere `r` still filters.

The run screen of a stale run says its orchestrator is gone, what its scheduler still holds
(here nothing: a local run), and that `r` resumes it; pressed, the run's recorded command starts
again detached and the new run records that it resumes the stale one.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import cast

from textual.pilot import Pilot
from textual.widgets import Static

from stemma.core.live import RunState, RunStatus, StepState, list_states, write_state
from stemma.core.runs.alive_jobs import AliveElement, AliveJobs
from stemma.tui.app import StemmaApp
from stemma.tui.screens import RunScreen
from stemma.tui.screens.resume import ResumeScreen
from stemma.tui.screens.stale_jobs import JOBS_SECONDS, StaleJobs

from .conftest import drive, live_state, row_count, until

SCRIPT = """
from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("live", max_workers=1)
    pipeline.run(DataGenerator, params={"count": 2, "rows": 2})
    pipeline.finalize()
"""


def _dead_pid() -> int:
    """The id of a process of this host that has exited (and been waited for)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(timeout=60)
    return process.pid


def _facts(app: StemmaApp) -> str:
    return str(app.screen.query_one("#run-facts", Static).render())


def test_r_on_a_stale_run_resumes_it_and_the_new_run_says_so(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (tmp_path / "live.py").write_text(SCRIPT)
    recorded = (sys.executable, "live.py")
    state = replace(
        live_state(root), pid=_dead_pid(), command=recorded[1:], launch=recorded, cwd=str(tmp_path)
    )
    write_state(root, state)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run(state.run_id)
        await until(pilot, lambda: row_count(app, "#steps") == 2, "the steps")
        screen = cast(RunScreen, app.screen)
        await until(pilot, lambda: "nothing of it is left" in _facts(app), "the scheduler's word")
        assert _facts(app).startswith("stale (orchestrator gone)")
        assert "r resumes it" in _facts(app)
        assert _r_key(screen) == "resume_run"  # in the footer, as Resume
        await pilot.press("r")  # shows the command first: Esc starts nothing
        await until(pilot, lambda: isinstance(app.screen, ResumeScreen), "the resume dialog")
        said = str(app.screen.query_one("#command", Static).render())
        assert f"cd {tmp_path} && {sys.executable} live.py" in said
        assert f"root {root}, backend local" in said
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "the run screen again")
        assert [s.run_id for s in list_states(root)] == [state.run_id]
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ResumeScreen), "the resume dialog")
        await pilot.press("enter")
        await until(pilot, lambda: _resumed(root, state.run_id) is not None, "the resumed run", 120)
        assert screen.status_filter == "all"  # r resumed: it did not filter the steps

    drive(root, scenario)
    resumed = _finished(root, state.run_id)
    assert resumed.status is RunStatus.COMPLETED
    assert (resumed.launch, resumed.cwd) == (recorded, str(tmp_path))


def test_r_on_a_running_run_still_shows_only_running_steps(tmp_path: Path) -> None:
    root = tmp_path / "store"
    state = live_state(root)  # alive: this process

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run(state.run_id)
        await until(pilot, lambda: row_count(app, "#steps") == 2, "the steps")
        screen = cast(RunScreen, app.screen)
        assert _r_key(screen) == "only('running')"
        await pilot.press("r")
        await until(pilot, lambda: row_count(app, "#steps") == 1, "the running step alone")
        assert screen.status_filter == "running"

    drive(root, scenario)
    assert [s.run_id for s in list_states(root)] == [state.run_id]  # nothing was started


def _resumed(root: Path, run_id: str) -> str | None:
    return next((s.run_id for s in list_states(root) if s.resumes == run_id), None)


def _r_key(screen: RunScreen) -> str:
    """The action ``r`` runs on ``screen`` now (Textual picks the first enabled binding)."""
    return screen.active_bindings["r"].binding.action


def _finished(root: Path, run_id: str) -> RunState:
    """The run that resumes ``run_id``, once it has ended."""
    deadline = time.monotonic() + 120
    while True:
        [new] = [s for s in list_states(root) if s.resumes == run_id]
        if new.status is not RunStatus.RUNNING:
            return new
        assert time.monotonic() < deadline, "the resumed run never finished"
        time.sleep(0.2)  # polling another process's state file: nothing to await


def test_stale_jobs_say_what_the_scheduler_holds_and_put_it_in_the_jobs_column() -> None:
    now = [100.0]
    jobs = StaleJobs(clock=lambda: now[0])
    assert jobs.due()
    jobs.asked()
    assert not jobs.due()
    now[0] += JOBS_SECONDS
    assert jobs.due()
    assert jobs.describe("r1", resumable=True).startswith("asking the scheduler")

    held = (
        AliveElement(element="9_0", state="RUNNING", step_number=1, keys=2),
        AliveElement(element="9_1", state="PENDING", step_number=1, keys=2),
    )
    jobs.took(AliveJobs(elements=held))
    assert jobs.describe("r1", resumable=True) == (
        "2 elements still in the scheduler: 1 PENDING, 1 RUNNING · r resumes it, waiting for "
        "them · `stemma reap` cancels them"
    )
    assert "`stemma resume r1` resumes it" in jobs.describe("r1", resumable=False)  # read-only
    written = StepState(number=1, name="t", operation="t", jobs={"RUNNING": 5})
    other = StepState(number=0, name="g", operation="g", jobs={"COMPLETED": 1})
    assert [s.jobs for s in jobs.steps((other, written))] == [{}, {"RUNNING": 1, "PENDING": 1}]
