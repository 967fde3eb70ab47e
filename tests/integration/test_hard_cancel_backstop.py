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
from stemma.core.engine.cancel.cancellation import HARD_EXIT_CODE
from tests.integration.process_tree import alive, descendants
from tests.integration.run_waits import wait_for, wait_for_run
from tests.integration.stubborn_markers import STUBBORN_MARKERS_ENV, every_worker_stubborn

SCRIPT = pathlib.Path(__file__).with_name("hanging_hard_cancel.py")
BACKSTOP = 3.0


def test_a_hard_press_exits_by_the_backstop_when_the_kill_never_returns(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "a root"
    markers = tmp_path / "stubborn-started"
    markers.mkdir()
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(root), str(BACKSTOP)],
        # the force press's grace outlasts the test; each stubborn unit says when it ignores SIGTERM
        env={**os.environ, CANCEL_GRACE_ENV: "60", STUBBORN_MARKERS_ENV: str(markers)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip(), "the script printed no run id"
        wait_for_run(root, lambda s: len(s.steps) >= 2 and s.steps[1].running > 0)
        wait_for(lambda: every_worker_stubborn(markers), 60, "stubborn workers")  # else force ends
        workers = descendants(process.pid)
        for level in (1, 2):  # each press seen before the next: signals close together merge
            os.killpg(process.pid, signal.SIGINT)
            wait_for_run(root, lambda s, level=level: s.cancel_level >= level, 30)
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
    deadline = time.monotonic() + 30  # the workers follow their orchestrator out
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(workers), f"orphaned workers: {alive(workers)}"
