"""Ctrl-C presses, for real: every SIGINT delivered counts, and the hard one lets ``finally`` run.

Each script runs in its own session, so a press is a SIGINT to its whole process group, as a
terminal sends it. "As fast as delivered" means the next SIGINT is sent the moment the kernel
no longer holds the previous one pending (``/proc/PID/status``): two SIGINTs pending at once
are one to the kernel, and nothing in the process could count them apart.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from stemma.core.engine.cancel.cancellation import HARD_EXIT_CODE
from stemma.core.live import RunState, RunStatus, list_states
from tests.integration.process_tree import alive, descendants
from tests.integration.run_waits import wait_for, wait_for_run
from tests.integration.stubborn_markers import STUBBORN_MARKERS_ENV, every_worker_stubborn

HERE = pathlib.Path(__file__).parent
ENDED_BY_CTRL_C = (-signal.SIGINT, HARD_EXIT_CODE)
"""A hard press's ending (docs/concepts/cancellation.md): killed by SIGINT, as Python ends on
an uncaught KeyboardInterrupt (a shell shows 130), or exit code 130 if the process lingered."""

_PYTHONPATH = os.environ.get("PYTHONPATH", "")

BUSY_SCRIPT = """
import pathlib
import sys
import threading

import cancellable_{door} as script


def spin() -> None:
    while True:
        pass


if __name__ == "__main__":
    threading.Thread(target=spin, daemon=True).start()
    root = sys.argv[1]
    if "{door}" == "lazy":
        script.main(root, 60.0, str(pathlib.Path(root) / "calls.txt"), False)
    else:
        script.main(root, 60.0, False)
"""
"""A real run (``cancellable_pipeline.py`` or ``cancellable_lazy.py``, 60 s units) whose script
keeps a thread busy, as a script doing its own work beside the run does: the main thread then
waits for the GIL before a Python signal handler can run, the window in which presses used to
fold."""

# Its units ignore SIGTERM, so the force press cannot end the run before the hard one lands:
# the KeyboardInterrupt then reaches the script while it waits on the run, not while it is in
# its finally block already (a hard press interrupts whatever the main thread is doing).
FINALLY_SCRIPT = """
import pathlib
import sys

from fault_operations import StubbornSlowCopy

from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    root, marker = sys.argv[1], pathlib.Path(sys.argv[2])
    pipeline = Pipeline.create("with-finally", root=root, max_workers=2)
    try:
        generated = pipeline.run(DataGenerator, params={"count": 4, "rows": 3})
        pipeline.run(
            StubbornSlowCopy,
            inputs={"dataset": generated.output("datasets")},
            params={"seconds": 60},
        )
    finally:
        marker.write_text("finally ran")
"""


def _sigint_pending(status_fd: int) -> bool:
    """Whether a SIGINT waits to be delivered (``status_fd``: the process's /proc status).

    Read with one ``pread`` of an open file, so the next press follows the delivery closely.
    """
    bit = 1 << (signal.SIGINT - 1)
    for line in os.pread(status_fd, 8192, 0).split(b"\n"):
        name, _, mask = line.partition(b":")
        if name in (b"ShdPnd", b"SigPnd") and int(mask, 16) & bit:
            return True
    return False


def _press_as_fast_as_delivered(process: subprocess.Popen[str], presses: int) -> None:
    status_fd = os.open(f"/proc/{process.pid}/status", os.O_RDONLY)
    try:
        for sent in range(presses + 1):  # then once more: the last one delivered too
            deadline = time.monotonic() + 10
            while _sigint_pending(status_fd):
                assert time.monotonic() < deadline, "a SIGINT stayed pending for 10 s"
            if sent < presses:
                os.killpg(process.pid, signal.SIGINT)
    finally:
        os.close(status_fd)


def _ended(process: subprocess.Popen[str], root: pathlib.Path, run_id: str) -> str:
    """The process's stderr once it ended; a run stopped below hard fails here, not in 60 s."""
    try:
        return process.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        err = process.communicate()[1]
        (state,) = [s for s in list_states(root) if s.run_id == run_id]
        raise AssertionError(
            f"three presses stopped the run at level {state.cancel_level}, not 3 (hard):\n{err}"
        ) from None


def _slow_units_running(state: RunState) -> bool:
    return sum(step.running for step in state.steps if "slow" in step.name) >= 2


def _start(argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # Workers import the scripts' code from here.
        env={
            **os.environ,
            **(env or {}),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), _PYTHONPATH])),
        },
    )


def _start_busy(door: str, root: pathlib.Path) -> subprocess.Popen[str]:
    script = root.parent / f"busy_{door}.py"
    script.write_text(BUSY_SCRIPT.format(door=door))
    return _start([str(script), str(root)])


@pytest.mark.parametrize("door", ["pipeline", "lazy"])
def test_three_presses_sent_as_fast_as_delivered_reach_hard_and_leave_no_worker(
    tmp_path: pathlib.Path, door: str
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    process = _start_busy(door, root)
    state = wait_for_run(root, _slow_units_running)
    workers = descendants(process.pid)
    assert workers, "the slow units' workers should be running"
    _press_as_fast_as_delivered(process, 3)
    err = _ended(process, root, state.run_id)
    (after,) = [s for s in list_states(root) if s.run_id == state.run_id]
    assert after.cancel_level == 3, err
    assert after.status is RunStatus.CANCELLED
    assert "hard: everything killed now" in err
    assert process.returncode in ENDED_BY_CTRL_C, err
    deadline = time.monotonic() + 10
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(workers), f"orphaned workers: {alive(workers)}"


@pytest.mark.parametrize(
    ("launcher", "codes"),
    [
        ([], ENDED_BY_CTRL_C),
        (["-m", "stemma.core.cli.main", "run"], (HARD_EXIT_CODE,)),  # stemma catches it: 130
    ],
    ids=["python", "stemma-run"],
)
def test_hard_press_runs_the_scripts_finally_then_ends_as_documented(
    tmp_path: pathlib.Path, launcher: list[str], codes: tuple[int, ...]
) -> None:
    root, marker, script = tmp_path / "root", tmp_path / "marker.txt", tmp_path / "script.py"
    root.mkdir()
    script.write_text(FINALLY_SCRIPT)
    markers = tmp_path / "stubborn-started"
    markers.mkdir()
    process = _start(
        [*launcher, str(script), str(root), str(marker)], {STUBBORN_MARKERS_ENV: str(markers)}
    )
    try:
        state = wait_for_run(root, _slow_units_running)
        # A unit sent may still be reading its inputs: until it ignores SIGTERM, the force press
        # would end the run, and the process, with the hard press still pending.
        wait_for(lambda: every_worker_stubborn(markers), 60, "stubborn workers")
        workers = descendants(process.pid)
        assert workers
        _press_as_fast_as_delivered(process, 3)
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    err = _ended(process, root, state.run_id)
    assert marker.read_text() == "finally ran", err  # the KeyboardInterrupt unwound the script
    assert process.returncode in codes, err
    (after,) = [s for s in list_states(root) if s.run_id == state.run_id]
    assert after.cancel_level == 3
    deadline = time.monotonic() + 10
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(workers), f"orphaned workers: {alive(workers)}"
