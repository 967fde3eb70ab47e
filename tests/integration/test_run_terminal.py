"""An attached `stemma run`'s bars on a real terminal (tmux), at several sizes.

Ctrl-C: the engine's cancel lines go to stderr, where the bars are drawn; they must print above
the bars, whole, and the bars must not be drawn a second time below them. A script that starts
several runs: each run's bars name it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

STEMMA = Path(sys.executable).parent / "stemma"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE = EXAMPLES / "watch_and_cancel.py"
DEADLINE_SECONDS = 90.0
PRESS_AGAIN = "Press Ctrl-C again for force: queued units dropped; running workers terminated."


class Pane:
    """A detached tmux session of ``columns`` x ``rows`` running one command; kept when it ends."""

    def __init__(self, command: list[str], columns: int, rows: int, cwd: Path) -> None:
        tmux = shutil.which("tmux")
        assert tmux is not None, "tmux is not installed: apt-get install tmux"
        self.tmux = tmux
        self.name = f"stemma-run-{uuid.uuid4().hex[:8]}"
        size = ["-x", str(columns), "-y", str(rows)]
        keep = [";", "set-option", "-t", self.name, "remain-on-exit", "on"]  # read it after
        subprocess.run(
            [
                tmux,
                "new-session",
                "-d",
                "-s",
                self.name,
                *size,
                "-c",
                str(cwd),
                " ".join(command),
                *keep,
            ],
            check=True,
            timeout=30,
        )

    def screen(self) -> str:
        """The visible screen and the scrollback above it."""
        done = subprocess.run(
            [self.tmux, "capture-pane", "-p", "-S", "-200", "-t", self.name],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        return done.stdout

    def keys(self, *keys: str) -> None:
        """Type keys (tmux names: C-c, Enter, or characters)."""
        subprocess.run([self.tmux, "send-keys", "-t", self.name, *keys], check=True, timeout=30)

    def ended(self) -> bool:
        """Whether its command has exited."""
        done = subprocess.run(
            [self.tmux, "display", "-p", "-t", self.name, "#{pane_dead}"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        return done.stdout.strip() == "1"

    def wait_for(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not condition():
            assert time.monotonic() < deadline, f"never saw {what}; the screen:\n{self.screen()}"
            time.sleep(0.2)  # another process draws the screen: polling is all there is

    def close(self) -> None:
        subprocess.run([self.tmux, "kill-session", "-t", self.name], check=False, timeout=30)


@pytest.fixture
def panes() -> Iterator[list[Pane]]:
    made: list[Pane] = []
    yield made
    for pane in made:
        pane.close()


@pytest.mark.parametrize(("columns", "rows"), [(80, 24), (160, 48)])
def test_ctrl_c_in_an_attached_run_prints_the_cancel_lines_whole_above_the_bars(
    tmp_path: Path, panes: list[Pane], columns: int, rows: int
) -> None:
    command = ["env", f"STEMMA_ROOT={tmp_path / 'root'}", str(STEMMA), "run", str(EXAMPLE), "5"]
    pane = Pane(command, columns, rows, tmp_path)
    panes.append(pane)
    pane.wait_for(
        lambda: re.search(r"example\.slow_scale .* [1-7]/8 .*running", pane.screen()) is not None,
        "the slow step's bar running",
    )
    pane.keys("C-c")
    pane.wait_for(pane.ended, "the run end")
    screen = pane.screen()
    lines = [line for line in screen.splitlines() if line.strip()]
    words = " ".join(" ".join(lines).split())  # rich wraps a long line at the terminal's width
    assert words.count(PRESS_AGAIN) == 1, screen
    assert re.search(r"run slow_\w+ cancelled: 4 steps", words), screen
    for step in ("example.generate", "example.slow_scale", "example.transform"):
        bars = [line for line in lines if step in line and "━" in line]
        assert len(bars) == 1, f"{step} drawn {len(bars)} times:\n{screen}"
    cancel = next(i for i, line in enumerate(lines) if line.startswith("stemma: cancelling run"))
    first_bar = next(i for i, line in enumerate(lines) if "━" in line)
    assert all(len(line) <= columns for line in lines)
    assert cancel < first_bar or "example.slow_scale" not in lines[first_bar], screen


@pytest.mark.parametrize(("columns", "rows"), [(100, 30), (200, 50)])
def test_run_of_a_script_with_two_runs_labels_each_bar_with_its_run(
    tmp_path: Path, panes: list[Pane], columns: int, rows: int
) -> None:
    root = tmp_path / "root"
    command = [
        "env",
        f"STEMMA_ROOT={root}",
        str(STEMMA),
        "run",
        str(EXAMPLES / "first_pipeline.py"),
    ]
    pane = Pane(command, columns, rows, tmp_path)
    panes.append(pane)
    pane.wait_for(pane.ended, "the script's end")
    screen = pane.screen()
    ends = re.findall(r"run (first_\w+) completed: 3 steps", screen)
    assert len(ends) == 2, screen
    for run_id in ends:
        short = run_id.rsplit("_", 1)[-1]
        bars = [line for line in screen.splitlines() if "━" in line and short in line]
        assert len(bars) == 3, f"{short}:\n{screen}"  # its three steps, each once
    assert all(len(line) <= columns for line in screen.splitlines())
