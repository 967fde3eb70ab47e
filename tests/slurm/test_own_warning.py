"""An element warns itself before its time limit when SLURM's warning has not come.

Each case runs in a process of its own, with a real ``SIGUSR2`` handler standing where
submitit's is (it prints, and tells the element's clock it was warned, as the element's handler
does); the scheduler's warning, when it comes, is a real signal too.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from stemma.slurm.own_warning import seconds_running

_CASE = """
import os, signal, sys, threading, time
from stemma.slurm import own_warning

def handler(signum, frame):
    own_warning.note_warning()
    print("warned", flush=True)

signal.signal(signal.SIGUSR2, handler)
# A limit 1.5 s from now, the warning asked for 1 s before it: due in about 0.5 s.
own_warning.arm(own_warning.seconds_running() + 1.5, 1.0)
if sys.argv[1] == "scheduler-warns-first":
    time.sleep(0.1)
    os.kill(os.getpid(), signal.SIGUSR2)
time.sleep(2.0)
"""


def _run(case: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CASE), case],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def test_an_element_unwarned_near_its_limit_warns_itself_once_and_says_so() -> None:
    done = _run("never")

    assert done.stdout == "warned\n"
    assert "no time-limit warning from SLURM 1 s before the limit" in done.stderr


def test_the_schedulers_warning_first_leaves_the_elements_own_unsent() -> None:
    done = _run("scheduler-warns-first")

    assert done.stdout == "warned\n"  # once: the scheduler's
    assert "no time-limit warning" not in done.stderr


def test_a_process_knows_how_long_it_has_run() -> None:
    age = float(
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import time; time.sleep(1.0); "
                "from stemma.slurm.own_warning import seconds_running; print(seconds_running())",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    )

    assert 1.0 <= age < 30.0  # its start as the kernel recorded it, not this module's import
    assert seconds_running() > 0.0
