"""Follow mode: ``f`` in the step screen tails a running step's live worker logs."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Log

from stemma.core.live import list_states
from stemma.tui.app import StemmaApp
from stemma.tui.client.log_follow import FIRST_READ_BYTES, LogFollower, followed_title
from stemma.tui.screens import StepScreen
from stemma.tui.widgets.step_log import StepLog

from .conftest import drive, script_running, until
from .test_snapshots import screen_text

SCRIPT = Path(__file__).with_name("chatty_pipeline.py")


def _sandbox_log(root: Path, execution: str, text: str) -> Path:
    path = root / "working" / "1_op" / execution[:2] / execution[2:4] / execution
    path.mkdir(parents=True)
    log = path / "tool_output.log"
    log.write_text(text)
    return log


def test_a_follower_returns_only_what_each_live_file_gained(tmp_path: Path) -> None:
    since = time.time() - 5
    old = _sandbox_log(tmp_path, "aabb0001", "yesterday\n")
    os.utime(old, (since - 60, since - 60))  # last changed before the step started
    live = _sandbox_log(tmp_path, "ccdd0002", "one\n")
    slurm = tmp_path / "logs" / "slurm" / "r1" / "42"
    slurm.mkdir(parents=True)
    (slurm / "42_0_0_log.out").write_text("element out\n")
    follower = LogFollower(tmp_path, run_id="r1", step_number=1, operation="op", since=since)
    first = {chunk.path.name: chunk.text for chunk in follower.poll()}
    assert first == {"tool_output.log": "one\n", "42_0_0_log.out": "element out\n"}
    with live.open("a") as handle:
        handle.write("two\n")
    assert [(c.path, c.text) for c in follower.poll()] == [(live, "two\n")]
    assert follower.poll() == []


def test_a_line_still_being_written_comes_whole_or_once_its_file_is_idle(tmp_path: Path) -> None:
    log = _sandbox_log(tmp_path, "aabb0004", "one\ntw")
    follower = LogFollower(tmp_path, run_id="r", step_number=1, operation="op", since=0)
    assert [c.text for c in follower.poll()] == ["one\n"]
    with log.open("a") as handle:
        handle.write("o\nthr")
    assert [c.text for c in follower.poll()] == ["two\n"]
    assert [c.text for c in follower.poll()] == ["thr\n"]  # idle: the prompt shows as it is
    assert follower.poll() == []


def test_a_followed_file_s_title_fits_its_width_shortened_from_the_left(tmp_path: Path) -> None:
    path = tmp_path / "working" / "1_op" / "ab" / "cd" / ("ab" * 16) / "tool_output.log"
    assert (
        followed_title(path, tmp_path, 200) == f"── working/1_op/ab/cd/{'ab' * 16}/tool_output.log"
    )
    short = followed_title(path, tmp_path, 40)
    assert len(short) == 40
    assert short.startswith("── …")
    assert short.endswith(f"{'ab' * 16}/tool_output.log"[-30:])


def test_a_long_file_first_seen_shows_its_end(tmp_path: Path) -> None:
    _sandbox_log(tmp_path, "eeff0003", "x" * FIRST_READ_BYTES + "the end\n")
    follower = LogFollower(tmp_path, run_id="r", step_number=1, operation="op", since=0)
    [chunk] = follower.poll()
    assert len(chunk.text) == FIRST_READ_BYTES
    assert chunk.text.endswith("the end\n")


@pytest.fixture
def chatty_run(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    with script_running(SCRIPT, tmp_path / "store") as process:
        yield tmp_path / "store", process


def _copy_running(root: Path) -> bool:
    """Whether the chatty step runs a unit now (its worker log is live)."""
    states = list_states(root)
    return bool(states) and any(
        s.number == 1 and s.status == "running" and s.running for s in states[0].steps
    )


async def _open_chatty_step(app: StemmaApp, pilot: Pilot[None], root: Path) -> StepLog:
    """Open the chatty step's screen once it runs a unit; its log view, mounted."""
    await until(pilot, lambda: _copy_running(root), "the chatty step running a unit", seconds=90)
    [state] = list_states(root)
    app.open_step(state.run_id, 1)
    await until(
        pilot,
        lambda: isinstance(app.screen, StepScreen) and bool(app.screen.query("#log-view")),
        "the step screen",
    )
    return app.screen.query_one("#log-view", StepLog)


def _lines(app: StemmaApp) -> list[str]:
    return list(app.screen.query_one("#log-view", Log).lines)


def _shown_alone(app: StemmaApp, line: str) -> bool:
    """Whether the screen shows ``line`` on a line of its own (scrollbar cells aside)."""
    return any(
        shown.rstrip().rstrip("▁▂▃▄▅▆▇█").rstrip() == line
        for shown in screen_text(app).splitlines()
    )


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_f_follows_a_running_step_s_worker_log_to_its_end_as_it_grows(
    chatty_run: tuple[Path, subprocess.Popen[bytes]], size: tuple[int, int]
) -> None:
    root, process = chatty_run

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await _open_chatty_step(app, pilot, root)
        await pilot.press("f")
        await until(pilot, lambda: any(line == "tick 5" for line in _lines(app)), "tick 5")
        await until(
            pilot, lambda: sum(_shown_alone(app, f"tick {n}") for n in range(60)) >= 8, "ticks"
        )
        [title] = [line for line in _lines(app) if line.endswith("/tool_output.log")][:1]
        assert len(title) <= size[0]
        assert _lines(app)[_lines(app).index(title) + 1] == "tick 0"  # not glued to the title
        seen = len(_lines(app))
        await until(pilot, lambda: len(_lines(app)) > seen + 5, "the log growing", seconds=30)
        log = app.screen.query_one("#log-view", Log)
        await until(pilot, lambda: log.scroll_y == log.max_scroll_y, "the view at the end")
        assert any("tool_output.log" in line for line in _lines(app))
        await pilot.press("f")
        stopped = len(_lines(app))
        await pilot.pause(1.0)  # two polls' worth: nothing more arrives once stopped
        assert len(_lines(app)) == stopped
        assert _lines(app)[-1] == "── stopped following"

    drive(root, scenario, size)
    assert process.wait(timeout=120) == 0


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_text_followed_while_the_log_tab_is_hidden_shows_under_a_header_that_fits_the_view(
    chatty_run: tuple[Path, subprocess.Popen[bytes]], size: tuple[int, int]
) -> None:
    root, process = chatty_run

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        log = await _open_chatty_step(app, pilot, root)
        log.follow()  # its tab still hidden: the view has no width to fit a header to yet
        await pilot.pause(1.5)  # three polls: the running unit's ticks have come meanwhile
        assert log.scrollable_content_region.width == 0
        await pilot.press("l")
        await until(pilot, lambda: any(line == "tick 3" for line in _lines(app)), "tick 3")
        [title] = [line for line in _lines(app) if line.endswith("/tool_output.log")][:1]
        assert len(title) <= log.scrollable_content_region.width  # not cut by the scrollbar
        ticks = _lines(app)[_lines(app).index(title) + 1 :]
        assert ticks[:4] == ["tick 0", "tick 1", "tick 2", "tick 3"]  # none lost while hidden

    drive(root, scenario, size)
    assert process.wait(timeout=120) == 0


def test_f_on_a_step_with_no_live_state_says_there_is_nothing_to_follow(tmp_path: Path) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step("gone_20261129_120000_00000001", 0)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await pilot.press("f")
        await until(
            pilot,
            lambda: any("not following" in line for line in _lines(app)),
            "the reason it cannot follow",
        )
        screen = app.screen
        assert isinstance(screen, StepScreen)
        assert not screen.following

    drive(tmp_path, scenario)
