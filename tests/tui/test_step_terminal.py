"""The step screen in a real terminal (tmux) at the smallest and largest sizes people use.

Follow mode (``f``) must show every line a running unit writes, each on its own line, under a
header naming the file (shortened from the left to fit); the footer must show every key, and
the tab bar the tabs' keys.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from .conftest import script_running
from .test_terminal import STEMMA, Terminal

SCRIPT = Path(__file__).with_name("chatty_pipeline.py")
TICK = re.compile(r"tick \d+")
DEADLINE_SECONDS = 90.0
SCROLLBAR = "▁▂▃▄▅▆▇█▔"


def _lines(screen: str) -> list[str]:
    """The screen's lines without the scrollbar drawn in their last cells."""
    return [line.rstrip().rstrip(SCROLLBAR).rstrip() for line in screen.splitlines()]


def _ticks_alone(screen: str) -> list[str]:
    """The lines that are exactly ``tick N`` (nothing glued before or after)."""
    return [line for line in _lines(screen) if TICK.fullmatch(line)]


def _root_started(root: Path) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not (root / "runs").is_dir():
        assert time.monotonic() < deadline, f"the run never made its root {root}"
        time.sleep(0.05)


def _open_chatty_step(terminal: Terminal) -> None:
    """From the runs list to the step screen of the chatty step, while it runs."""
    terminal.wait_for(lambda s: "chatty" in s and "running" in s, "the running pipeline")
    terminal.open_run()
    terminal.wait_for(
        lambda s: re.search(r"tests\.chatty_copy +running", s) is not None, "the chatty step"
    )
    terminal.keys("Down")
    time.sleep(0.3)
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "tests.chatty_copy · running" in s, "the step screen")


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_follow_shows_every_line_on_its_own_line_under_a_header_that_fits(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    root = tmp_path / "store"
    width, _ = size
    with script_running(SCRIPT, root) as process:
        _root_started(root)
        terminal = Terminal(
            f"{STEMMA} tui {root}", {"TERM": "xterm-256color", "PATH": os.environ["PATH"]}, size
        )
        try:
            _open_chatty_step(terminal)
            shown = terminal.wait_for(lambda s: "palette" in s, "the footer")
            for key in ("esc Back", "f Follow", "x Failed", "r Running", "/ Filter", "? Help"):
                assert key in shown, f"{key!r} is not in the footer"
            for tab in ("Executions (e)", "Log (l)", "Params (p)", "Outputs (o)", "Why (w)"):
                assert tab in shown, f"{tab!r} is not in the tab bar"
            terminal.keys("f")
            shown = terminal.wait_for(lambda s: len(_ticks_alone(s)) >= 8, "tick lines")
            assert not [
                line for line in _lines(shown) if "tool_output.log" in line and "tick" in line
            ]
            numbers = [int(line.split()[1]) for line in _ticks_alone(shown)]
            assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))  # none lost
            terminal.keys("f")
            terminal.wait_for(lambda s: "stopped following" in s, "following stopped")
            terminal.keys("Home")  # the log view has the keyboard: back to its first lines
            top = terminal.wait_for(lambda s: "── following" in s, "the top of the log")
            lines = _lines(top)
            headers = [i for i, line in enumerate(lines) if line.endswith("/tool_output.log")]
            assert len(headers) == 1, f"not one file's header at the top of the log:\n{top}"
            [header] = headers
            assert lines[header].startswith("── ")
            assert len(lines[header]) <= width
            under = _ticks_alone("\n".join(lines[header + 1 :]))
            # the file's first lines, right under it: none glued to the header, none lost
            assert under[:3] == ["tick 0", "tick 1", "tick 2"]
            assert lines[header + 1] == "tick 0"
        finally:
            terminal.close()
        assert process.wait(timeout=120) == 0
