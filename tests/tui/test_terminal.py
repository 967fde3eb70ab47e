"""End to end in a real terminal: tmux runs `stemma tui` beside a running pipeline.

Keys go in with send-keys, the screen comes back with capture-pane, and the store says what
really happened. Needs tmux on PATH (scripts/dev.py installs it with the other system tools).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stemma.core.live import RunStatus, list_states

from .conftest import script_running

STEMMA = Path(sys.executable).parent / "stemma"
SCRIPT = Path(__file__).with_name("slow_pipeline.py")
LAZY_SCRIPT = Path(__file__).with_name("slow_lazy.py")
DEADLINE_SECONDS = 90.0
RUN_SCREEN = re.compile(r"#\s+step\s+status")
"""The run screen's steps table header: shown as soon as the screen is, before its rows."""


class Terminal:
    """One detached tmux session running a command: 80x24, or ``size`` (width, height)."""

    def __init__(self, command: str, env: dict[str, str], size: tuple[int, int] = (80, 24)) -> None:
        tmux = shutil.which("tmux")
        assert tmux is not None, "tmux is not installed: apt-get install tmux"
        self.tmux = tmux
        self.name = f"stemma-test-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{key}={value}" for key, value in env.items())
        width, height = (str(n) for n in size)
        # Made at the size asked, so the dashboard reads it as it starts: a session made at
        # 80x24 and resized a moment later raced the dashboard's start, which once drew at
        # 80x24 inside a 200x50 window.
        launch = f"env {exports} {command}"
        subprocess.run(
            [tmux, "new-session", "-d", "-s", self.name, "-x", width, "-y", height, launch],
            check=True,
            timeout=30,
        )
        # resize-window pins it (the window's window-size becomes manual): the server never
        # sizes it again, whatever other tests' sessions come and go on it.
        subprocess.run(
            [tmux, "resize-window", "-t", self.name, "-x", width, "-y", height],
            check=True,
            timeout=30,
        )

    def screen(self) -> str:
        """What the terminal shows now."""
        done = subprocess.run(
            [self.tmux, "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        return done.stdout

    def keys(self, *keys: str) -> None:
        """Type keys (tmux names: Enter, Escape, or characters)."""
        subprocess.run([self.tmux, "send-keys", "-t", self.name, *keys], check=True, timeout=30)

    def wait_for(self, condition: Callable[[str], bool], what: str) -> str:
        """The screen once ``condition`` holds for it; fails after a deadline, showing it."""
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            shown = self.screen()
            if condition(shown):
                return shown
            assert time.monotonic() < deadline, f"never saw {what}; the screen:\n{shown}"
            time.sleep(0.2)  # another process draws the screen: polling is all there is

    def open_run(self) -> None:
        """Enter on the runs list until the run screen shows (its steps table, before its rows).

        A key sent while the first frame settles can be missed, so Enter is sent again, but
        only after the run screen had seconds to show: on a loaded machine it can take that
        long to draw, and a second Enter on it would open a step.
        """
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            self.keys("Enter")
            patience = time.monotonic() + 5.0
            while time.monotonic() < patience:
                if RUN_SCREEN.search(self.screen()):
                    return
                time.sleep(0.2)
            assert time.monotonic() < deadline, f"never left the runs list:\n{self.screen()}"

    def close(self) -> None:
        """End the session (and the dashboard in it)."""
        subprocess.run([self.tmux, "kill-session", "-t", self.name], check=False, timeout=30)


def _root_started(root: Path) -> None:
    """Wait for the run to make its root (``stemma tui`` refuses a path that is not one yet)."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not (root / "runs").is_dir():
        assert time.monotonic() < deadline, f"the run never made its root {root}"
        time.sleep(0.05)


def _stopped_and_shown_cancelled(process: subprocess.Popen[bytes], terminal: Terminal) -> None:
    """Wait for the cancelled run's process to end and the dashboard to say so; then quit."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while process.poll() is None:
        assert time.monotonic() < deadline, "the run never stopped"
        time.sleep(0.2)
    terminal.wait_for(lambda s: "cancelled" in s, "the run shown cancelled")
    terminal.keys("q")


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    with script_running(SCRIPT, tmp_path / "store") as process:
        yield tmp_path / "store", process


def test_stemma_tui_in_tmux_navigates_to_a_running_pipeline_and_cancels_it(
    running: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    root, process = running
    _root_started(root)
    terminal = Terminal(
        f"{STEMMA} tui {root}", {"TERM": "xterm-256color", "PATH": os.environ["PATH"]}
    )
    try:
        terminal.wait_for(lambda s: "running" in s and "slow" in s, "the running pipeline")
        terminal.keys("Enter")
        terminal.wait_for(
            lambda s: "example.slow_copy" in s and "/12" in s and "running" in s, "the slow step"
        )
        terminal.keys("c")
        shown = terminal.wait_for(lambda s: "cancel 1/3 asked" in s, "the first cancel press")
        assert "press c again for force (queued units dropped; workers terminated)" in shown
        assert "example.slow_copy" in shown  # the steps stay in view under the bar
        _stopped_and_shown_cancelled(process, terminal)
    finally:
        terminal.close()
    [state] = list_states(root)
    assert state.status is RunStatus.CANCELLED
    assert 0 < state.steps[1].succeeded < 12


def test_stemma_tui_in_tmux_shows_a_lazy_run_step_by_step_and_cancels_it(tmp_path: Path) -> None:
    root = tmp_path / "lazy store"  # a space in the path, as users' roots have
    env = {**os.environ, "PYTHONPATH": str(LAZY_SCRIPT.parent)}  # workers import its functions
    with script_running(LAZY_SCRIPT, root, env) as process:
        _root_started(root)
        terminal = Terminal(
            f"{STEMMA} tui '{root}'", {"TERM": "xterm-256color", "PATH": os.environ["PATH"]}
        )
        try:
            terminal.wait_for(lambda s: "lazy" in s and "running" in s, "the running lazy run")
            terminal.open_run()
            shown = terminal.wait_for(
                lambda s: "wait/0" in s and "total" in s and "running" in s, "its step tree"
            )
            assert "wait/5" in shown  # all seven steps fit an 80x24 screen
            terminal.keys("c")
            terminal.wait_for(lambda s: "cancel 1/3 asked" in s, "the first cancel press")
            _stopped_and_shown_cancelled(process, terminal)
        finally:
            terminal.close()
    assert process.returncode != 0  # run() raised RunCancelledError
    [state] = list_states(root)
    assert state.status is RunStatus.CANCELLED
    finished = [step for step in state.steps if step.status == "completed"]
    assert 0 < len(finished) < 7
