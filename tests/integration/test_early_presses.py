"""One Ctrl-C at every moment of a run's opening, through both front doors (issue 33).

A press before the run is listed ends the script plainly (exit 130, no traceback, no run left,
no worker left); from the moment its state file is written, the run is cancelled gracefully
(exit 0, the run recorded ``cancelled``). Each moment is made exact by a pause point
(:mod:`stemma.core.engine.cancel.pause_points`): the script waits there while the test
presses, and goes on once the press is acknowledged on its stderr. The script runs in its own
session, so a press is a SIGINT to its whole process group, as a terminal sends it.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import pytest

from stemma.core.engine.cancel.pause_points import AT_ENV, DIR_ENV
from stemma.core.errors import OPENING_INTERRUPTED_CODE
from stemma.core.live import RunStatus, list_states
from tests.integration.process_tree import alive, descendants
from tests.integration.run_waits import wait_for

HERE = pathlib.Path(__file__).parent
_PYTHONPATH = os.environ.get("PYTHONPATH", "")

BEFORE_LISTED = (
    "opening.presses",
    "opening.workers",
    "opening.store",
    "opening.recovered",
    "opening.context",
)
"""The moments of the opening before the run is listed, each reached in both doors (in
another order: the Pipeline's first worker starts before its store opens, the lazy run's once
its graph is planned)."""
LISTED = "opening.listed"
"""The run's state file has just been written: it is listed."""

ACKNOWLEDGED = ("stemma: interrupted while a run was opening", "stemma: cancelling run")
"""The first words of the line a press prints: before the run is listed, and after."""

LAZY_SCRIPT = """
import pathlib
import sys

import cancellable_lazy as script

from stemma.core.errors import RunCancelledError

if __name__ == "__main__":
    root = sys.argv[1]
    try:
        script.main(root, 0.2, str(pathlib.Path(root).parent / "calls.txt"), False)
    except RunCancelledError as err:  # as docs/concepts/cancellation.md's naps.py does
        print("cancelled; not built:", len(err.skipped), flush=True)
"""
"""``cancellable_lazy.py`` run by a script that catches the cancel, as the docs show: a graceful
cancel ends it with 0."""


def _start(
    door: str, root: pathlib.Path, moment: str, pauses: pathlib.Path
) -> subprocess.Popen[str]:
    if door == "lazy":
        script = root.parent / "lazy_script.py"
        script.write_text(LAZY_SCRIPT)
    else:
        script = HERE / "cancellable_pipeline.py"  # a graceful cancel: finalize(), exit 0
    # Files, not pipes: the test reads stderr while the script runs (the child keeps its copies).
    with (root.parent / "out.txt").open("w") as out, (root.parent / "err.txt").open("w") as err:
        return subprocess.Popen(
            [sys.executable, str(script), str(root), "0.2"],
            stdout=out,
            stderr=err,
            text=True,
            start_new_session=True,
            env={
                **os.environ,
                AT_ENV: moment,
                DIR_ENV: str(pauses),
                # Workers import the scripts' code from here.
                "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), _PYTHONPATH])),
            },
        )


def _err(root: pathlib.Path) -> str:
    return (root.parent / "err.txt").read_text()


def _press_at(
    process: subprocess.Popen[str],
    root: pathlib.Path,
    moment: str,
    pauses: pathlib.Path,
    *,
    release: bool = True,
) -> set[int]:
    """Press once while the script waits at ``moment``, then let it go on (``release``).

    Returns:
        The script's processes at the press (its workers, once started).
    """
    wait_for(
        lambda: (pauses / f"{moment}.reached").exists() or process.poll() is not None,
        120,
        f"the moment {moment}",
    )
    assert process.poll() is None, f"ended before {moment}:\n{_err(root)}"
    started = descendants(process.pid)
    os.killpg(process.pid, signal.SIGINT)
    # Acknowledged: the press's line is written (or the process died of it: the bug).
    wait_for(
        lambda: any(line in _err(root) for line in ACKNOWLEDGED) or process.poll() is not None,
        60,
        "the press's line",
    )
    if release:
        (pauses / f"{moment}.go").write_text("")
    return started


@pytest.mark.parametrize("moment", [*BEFORE_LISTED, LISTED])
@pytest.mark.parametrize("door", ["pipeline", "lazy"])
def test_one_press_at_any_moment_of_the_opening_cancels_gracefully_or_exits_plainly(
    tmp_path: pathlib.Path, door: str, moment: str
) -> None:
    root, pauses = tmp_path / "root", tmp_path / "pauses"
    root.mkdir()
    pauses.mkdir()
    process = _start(door, root, moment, pauses)
    try:
        started = _press_at(process, root, moment, pauses)
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    err, out = _err(root), (tmp_path / "out.txt").read_text()
    assert "Traceback" not in err, err
    if moment in ("opening.workers", "opening.context", LISTED):  # either door's worker started
        assert started, "the press should have landed while the first worker started"
    if moment in BEFORE_LISTED:
        assert process.returncode == OPENING_INTERRUPTED_CODE, err
        assert "interrupted while a run was opening" in err
        assert list_states(root) == [], "a run stopped before it was listed left its state"
        assert out == ""
    else:
        assert process.returncode == 0, err
        assert "graceful" in err
        assert "Press Ctrl-C again for force" in err
        assert "cancelled (graceful)" in err  # the summary line
        (state,) = list_states(root)
        assert state.status is RunStatus.CANCELLED, err
        assert state.cancel_level == 1
        if door == "lazy":
            assert out.strip() == "cancelled; not built: 6"
        assert not (tmp_path / "calls.txt").exists()  # no slow step ran
    wait_for(lambda: not alive(started) or None, 10, "the workers' exit")


@pytest.mark.parametrize("door", ["pipeline", "lazy"])
def test_a_second_press_before_the_run_is_listed_stops_the_opening_at_once(
    tmp_path: pathlib.Path, door: str
) -> None:
    root, pauses = tmp_path / "root", tmp_path / "pauses"
    root.mkdir()
    pauses.mkdir()
    moment = "opening.recovered"
    process = _start(door, root, moment, pauses)
    try:
        started = _press_at(process, root, moment, pauses, release=False)
        os.killpg(process.pid, signal.SIGINT)  # the pause is not released: this one ends it
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    err = _err(root)
    assert process.returncode == OPENING_INTERRUPTED_CODE, err
    assert "Traceback" not in err, err
    assert "interrupted again: stopping at once" in err
    assert list_states(root) == []
    wait_for(lambda: not alive(started) or None, 10, "the workers' exit")
