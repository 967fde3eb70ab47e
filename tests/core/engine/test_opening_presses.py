"""Presses while a run opens (``OpeningPresses``): the opening's, then the run's once handed over.

Each case runs a small script that presses itself (a SIGINT to its own process, which the
kernel delivers as it would a terminal's) and waits until the press is counted, polling with a
deadline: a press that escaped as ``KeyboardInterrupt`` would end the script with a traceback.
"""

from __future__ import annotations

import subprocess
import sys

from stemma.core.errors import OPENING_INTERRUPTED_CODE

PRELUDE = """
import os, signal, sys, time
from stemma.core.engine import OpeningPresses, watched_opening
from stemma.core.errors import OpeningInterrupted

def press_and_wait(until):
    os.kill(os.getpid(), signal.SIGINT)
    deadline = time.monotonic() + 30
    while not until():
        assert time.monotonic() < deadline, "the press was never counted"
        time.sleep(0.01)
"""


def _run(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + body],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_press_before_the_hand_over_stops_the_opening_at_its_next_step_plainly() -> None:
    done = _run(
        """
with watched_opening() as opening:
    press_and_wait(lambda: opening.pressed)
    print("went on to the next step")
    opening.reached("opening.store")
    print("never printed")
"""
    )
    assert done.returncode == OPENING_INTERRUPTED_CODE, done.stderr
    assert done.stdout == "went on to the next step\n"
    assert "Traceback" not in done.stderr
    assert "stemma: interrupted while a run was opening" in done.stderr
    assert "Press Ctrl-C again to stop at once" in done.stderr


def test_the_hand_over_refuses_a_run_pressed_before_it_and_then_the_presses_are_the_runs() -> None:
    done = _run(
        """
try:
    with watched_opening() as opening:
        press_and_wait(lambda: opening.pressed)
        opening.hand_over(lambda: None)
except OpeningInterrupted as stop:
    print("refused", stop.code, opening.handed_over)

presses = []
with watched_opening() as opening:
    opening.hand_over(lambda: presses.append(1))
    press_and_wait(lambda: presses)
    press_and_wait(lambda: len(presses) == 2)
    print("the run's presses:", len(presses), "the opening's:", opening.pressed)
# Handed over: still watched (the run's canceller restores them when the run ends).
print("watched after:", opening.signals.installed)
opening.signals.restore()
print("restored:", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"refused {OPENING_INTERRUPTED_CODE} False",
        "the run's presses: 2 the opening's: False",
        "watched after: True",
        "restored: True",
    ]


def test_an_opening_that_ends_without_a_run_puts_the_handlers_back_or_stops_if_pressed() -> None:
    done = _run(
        """
with watched_opening() as opening:
    assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
print("unpressed:", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
try:
    with watched_opening() as opening:
        press_and_wait(lambda: opening.pressed)
        raise ValueError("a bad root")
except ValueError as error:
    print("an error goes on:", error)
with watched_opening() as opening:
    press_and_wait(lambda: opening.pressed)
print("never printed")
"""
    )
    assert done.returncode == OPENING_INTERRUPTED_CODE, done.stderr
    assert done.stdout.splitlines() == ["unpressed: True", "an error goes on: a bad root"]
    assert "Traceback" not in done.stderr


def test_the_opening_leaves_the_presses_to_a_run_that_holds_them() -> None:
    done = _run(
        """
held = []
with watched_opening() as running:  # a run of this process, listed and watching its presses
    running.hand_over(lambda: held.append(1))
with watched_opening() as opening:  # another run opening meanwhile
    print("the second opening watches:", opening.signals.installed)
    press_and_wait(lambda: held)
    print("the running run's press:", len(held), "the opening's:", opening.pressed)
running.signals.restore()
"""
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "the second opening watches: False",
        "the running run's press: 1 the opening's: False",
    ]
