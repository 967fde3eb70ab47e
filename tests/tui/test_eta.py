"""A running step's ETA from earlier runs of the same step (same spec, else same name and
operation), computed by the client and shown in the run screen's time column."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import cast

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from stemma.core.live import StepState
from stemma.storage.queries import steps
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.client.eta import Paces, PaceSample, history_eta, paces
from stemma.tui.client.history_rows import pace_samples
from stemma.tui.screens import RunScreen
from stemma.tui.widgets.cells import duration_text

from .conftest import FilledStore, drive, live_state, row_count, until


def _sample(spec: str, seconds: float, units: int, name: str = "s") -> PaceSample:
    return PaceSample(
        step_spec_id=spec, step_name=name, operation="o", seconds=seconds, units=units
    )


def _running(total: int, done: int, name: str = "s") -> StepState:
    return StepState(
        number=1, name=name, operation="o", status="running", total=total, succeeded=done
    )


def test_paces_average_seconds_per_unit_by_spec_and_by_name_and_skip_unitless_runs() -> None:
    known = paces([_sample("a", 10.0, 10), _sample("a", 30.0, 10), _sample("b", 5.0, 0)])
    assert known.by_spec == {"a": 2.0}
    assert known.by_name == {("s", "o"): 2.0}


def test_history_eta_prefers_the_same_spec_then_falls_back_to_name_and_operation() -> None:
    known = Paces(by_spec={"a": 2.0}, by_name={("s", "o"): 5.0})
    step = _running(total=10, done=4)
    assert history_eta(step, "a", known) == 12.0  # 6 units left at 2 s
    assert history_eta(step, "other", known) == 30.0  # same name and operation: 5 s a unit
    assert history_eta(_running(10, 4, name="new"), "other", known) is None


@pytest.mark.parametrize(
    "step",
    [
        StepState(number=1, name="s", operation="o", status="completed", total=10, succeeded=10),
        StepState(number=1, name="s", operation="o", status="running", total=0),
    ],
    ids=["finished", "units-unknown"],
)
def test_history_eta_is_none_for_a_step_not_running_or_with_unknown_units(
    step: StepState,
) -> None:
    assert history_eta(step, "a", Paces(by_spec={"a": 2.0})) is None


def test_pace_samples_of_a_real_store_count_executed_units_and_the_step_s_duration(
    filled: FilledStore,
) -> None:
    samples = {s.step_name: s for s in pace_samples(steps(filled.root))}
    transform = samples["example.transform"]
    assert transform.units == 3
    assert transform.operation == "example.transform"
    assert transform.seconds > 0


def test_the_run_screen_shows_a_running_step_s_eta_from_its_earlier_runs(
    filled: FilledStore, tmp_path: Path
) -> None:
    root = tmp_path / "store"
    shutil.copytree(filled.root, root)
    [earlier] = [s for s in pace_samples(steps(root)) if s.step_name == "example.transform"]
    running = StepState(
        number=1,
        name="example.transform",
        operation="example.transform",
        status="running",
        total=30,
        succeeded=5,
        upstream=(0,),
    )
    state = live_state(root, steps=(running,))
    expected = earlier.seconds / earlier.units * 25
    [step] = DashboardClient(root).run(state.run_id).steps
    assert DashboardClient(root).run(state.run_id).etas == {step.number: pytest.approx(expected)}

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run(state.run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
        await until(pilot, lambda: row_count(app, "#steps") == 1, "the step")
        table = cast("DataTable[object]", app.screen.query_one("#steps", DataTable))
        assert str(table.get_row_at(0)[8]) == f"~{duration_text(expected)}"

    drive(root, scenario)


def test_paces_averaged_in_polars_match_the_pure_average_of_the_samples(
    filled: FilledStore,
) -> None:
    from stemma.tui.client.history_rows import paces_from_steps_table

    frame = steps(filled.root)
    assert paces_from_steps_table(frame) == paces(pace_samples(frame))
    assert paces_from_steps_table(frame).by_spec  # not vacuous: the store has completed steps
