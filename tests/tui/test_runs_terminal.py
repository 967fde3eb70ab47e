"""The runs list in a real terminal (tmux): runs of one script told apart, columns by width.

Two real runs of one script that differ only by their arguments: at 200x50 each row shows its
short id, script and arguments, user and host; the same dashboard resized to 80x24 drops user
and host and keeps the arguments.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from stemma.core.live import list_states

from .test_terminal import STEMMA, Terminal

SCRIPT = """\
import sys
from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("tiny", root=sys.argv[1], max_workers=1)
    pipeline.run(DataGenerator, params={"count": 1, "rows": int(sys.argv[3])})
    pipeline.finalize()
"""

NARROW_HEADER = re.compile(r"^ id +status +run +started +time *$", re.MULTILINE)


def _resize(terminal: Terminal, width: int, height: int) -> None:
    subprocess.run(
        [terminal.tmux, "resize-window", "-t", terminal.name, "-x", str(width), "-y", str(height)],
        check=True,
        timeout=30,
    )


def _two_runs(tmp_path: Path) -> Path:
    """``make_data.py ROOT --rows 2`` then ``--rows 3``, each in its own interpreter."""
    (tmp_path / "make_data.py").write_text(SCRIPT)
    root = tmp_path / "store"
    for rows in ("2", "3"):
        done = subprocess.run(
            [sys.executable, "make_data.py", str(root), "--rows", rows],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    return root


def _row_of(screen: str, short_id: str) -> str:
    [line] = [line for line in screen.splitlines() if line.strip().startswith(short_id)]
    return line


def test_runs_of_one_script_are_told_apart_at_200x50_and_at_80x24(tmp_path: Path) -> None:
    root = _two_runs(tmp_path)
    states = {state.command[-1]: state for state in list_states(root)}
    ids = {rows: state.run_id.rsplit("_", 1)[-1] for rows, state in states.items()}
    # Without COLUMNS and LINES (pytest's environment has them): Textual would take them for
    # the terminal's size at every resize.
    terminal = Terminal(
        f"env -u COLUMNS -u LINES {STEMMA} tui {root}",
        {"TERM": "xterm-256color", "PATH": os.environ["PATH"]},
    )
    try:
        # Resized once the dashboard shows: it must follow the terminal, not only start wide.
        # (its keys come last, once Textual's start-up is over and it follows SIGWINCH)
        terminal.wait_for(lambda s: "2 of 2 runs" in s and "palette" in s, "the runs list")
        _resize(terminal, 200, 50)
        shown = terminal.wait_for(
            lambda s: "user" in s and "host" in s and ids["2"] in s and ids["3"] in s,
            "both runs with their users and hosts",
        )
        for rows in ("2", "3"):
            line = _row_of(shown, ids[rows])
            assert f"tiny · make_data.py …/store --rows {rows}" in line
            assert getpass.getuser() in line
            assert socket.gethostname()[:20] in line
        _resize(terminal, 80, 24)
        shown = terminal.wait_for(
            lambda s: NARROW_HEADER.search(s) is not None, "the columns of 80x24"
        )
        for rows in ("2", "3"):
            line = _row_of(shown, ids[rows])  # cut in the middle: the arguments stay
            assert re.search(
                rf"completed  tiny · make_d…py …/store --rows {rows} +\d\d-\d\d ", line
            )
            assert len(line.rstrip()) <= 80
        terminal.keys("q")
    finally:
        terminal.close()
