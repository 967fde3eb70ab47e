"""Examples the stateful model test (``test_stateful_root.py``) found, kept as plain tests.

Each replays the rules of one failing example with the real pipeline on a real root, then
asserts the promise it broke. A bug not fixed yet is a strict ``xfail`` naming it: the test
runs every time, and the day the bug is fixed it fails until the mark is removed.
"""

from __future__ import annotations

import pathlib

import polars as pl

from stemma.core.engine.cancel.cancellation import HARD_EXIT_CODE
from stemma.core.live import RunStatus, read_state, request_cancel
from tests.model import root_checks
from tests.model.orchestrators import SCRIPT, Orchestrator
from tests.model.root_model import RootModel
from tests.model.test_stateful_root import UNIT_SECONDS

EXITS_AT_THE_INTERRUPT = f"""
import os
import sys

sys.path.insert(0, {str(SCRIPT.parent)!r})
import model_pipeline

if __name__ == "__main__":  # the local backend's workers import this module too
    try:
        model_pipeline.main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), None)
    except KeyboardInterrupt:
        os._exit({HARD_EXIT_CODE})
"""
"""The model pipeline, ending at once when a hard cancel's ``KeyboardInterrupt`` reaches it, as
the hard cancel itself ends a process that lingers (``os._exit(130)``): what a loaded machine
showed by chance, made certain."""


def _inputs(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "inputs"
    folder.mkdir()
    for name, text in RootModel().files().items():
        (folder / name).write_text(text)
    return folder


def test_a_hard_cancelled_step_has_a_final_event_with_the_live_states_counts(
    tmp_path: pathlib.Path,
) -> None:
    # Found as: a cancel at level 3 while the slow step ran, then the live counts checked. On a
    # loaded machine the stopped step's thread had not written its event when the process
    # ended: the final event depends on that race, which this script always loses.
    root, inputs, script = tmp_path / "root", _inputs(tmp_path), tmp_path / "exits.py"
    script.write_text(EXITS_AT_THE_INTERRUPT)
    running = Orchestrator(root, inputs, 1.0, UNIT_SECONDS, script=script)
    assert running.wait_until_slow_units_run()
    request_cancel(root, running.run_id, 3)
    assert running.wait().returncode == HARD_EXIT_CODE
    state = read_state(root, running.run_id)
    assert state.status is RunStatus.CANCELLED
    assert state.cancel_level == 3
    stopped = [step for step in state.steps if step.status == "cancelled"]
    assert stopped, "the hard cancel stopped no step"
    assert Orchestrator(root, inputs, 1.0, UNIT_SECONDS).wait().returncode == 0  # next start
    tables = root_checks.read_tables(root)
    events = tables[root_checks.STEPS].filter(pl.col("pipeline_run_id") == running.run_id)
    finals = set(events.filter(pl.col("status") != "running").get_column("step_number"))
    assert {step.number for step in stopped} <= finals, "a stopped step has no final event"
    assert root_checks.live_counts_differ(root, tables) == []


def test_a_resumed_runs_summary_names_every_step_of_the_run(tmp_path: pathlib.Path) -> None:
    # Found as: cancel at level 1, then resume: the resumed run completed every step it ran,
    # but its summary lacked step 0 (and, listing the first attempt's cancelled step, said
    # overall_success false; the machine now judges a run by its live state instead).
    root, inputs = tmp_path / "root", _inputs(tmp_path)
    first = Orchestrator(root, inputs, 1.0, UNIT_SECONDS)
    assert first.wait_until_slow_units_run()
    request_cancel(root, first.run_id, 1)
    assert first.wait().returncode == 0
    resumed = Orchestrator(root, inputs, 1.0, UNIT_SECONDS, resume=first.run_id).wait()
    assert resumed.returncode == 0, resumed.stderr
    state = read_state(root, first.run_id)
    assert state.status is RunStatus.COMPLETED
    assert [s.status for s in state.steps] == ["completed"] * 3  # steps 3, 4, 5: this process's
    assert resumed.summary is not None
    numbers = [step["step_number"] for step in resumed.summary["steps"]]
    assert numbers == list(range(6)), f"the summary lists steps {numbers} of the run's 0-5"
