"""A hard press ends the process even when what it runs hangs: the backstop, for real.

The run's backend never answers the level-3 cancel (as ``scancel`` may not, on a controller
that is down), so neither the kill, nor the final writes, nor the ``KeyboardInterrupt`` comes:
the process still exits with 130 ``HARD_BACKSTOP`` seconds after the press, saying why, and
its workers follow their orchestrator out.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

from stemma.core.cancel_levels import CANCEL_GRACE_ENV
from stemma.core.engine.cancellation import HARD_EXIT_CODE
from stemma.core.live import read_state
from tests.integration.process_tree import alive, descendants

SCRIPT = pathlib.Path(__file__).with_name("hanging_hard_cancel.py")
BACKSTOP = 3.0


def _wait(condition: object, seconds: float, what: str) -> None:
    assert callable(condition)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except (FileNotFoundError, ValueError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"never saw {what}")


def test_a_hard_press_exits_by_the_backstop_when_the_kill_never_returns(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "a root"
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(root), str(BACKSTOP)],
        env={**os.environ, CANCEL_GRACE_ENV: "60"},  # the force press's grace outlasts the test
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        run_id = process.stdout.readline().strip()
        _wait(
            lambda: (
                len(read_state(root, run_id).steps) >= 2
                and read_state(root, run_id).steps[1].running > 0
            ),
            120,
            "the slow step running",
        )
        workers = descendants(process.pid)
        for level in (1, 2):  # each press seen before the next: signals close together merge
            os.killpg(process.pid, signal.SIGINT)
            _wait(
                lambda level=level: read_state(root, run_id).cancel_level >= level,
                30,
                f"cancel level {level} in the run's state",
            )
        os.killpg(process.pid, signal.SIGINT)  # hard: its state is written after the kill
        pressed = time.monotonic()
        out, err = process.communicate(timeout=60)
        took = time.monotonic() - pressed
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == HARD_EXIT_CODE, err
    assert "finished" not in out
    assert f"was cancelled hard {BACKSTOP:g} s ago" in err
    assert took < BACKSTOP + 20, took  # not the 60 s copies, not for ever
    _wait(lambda: not alive(workers), 30, "the workers gone after their orchestrator")
