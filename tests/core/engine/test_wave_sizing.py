"""SLURM array elements sized from the recorded seconds per unit: the pure rules.

The end-to-end behaviour on the local cluster is in ``tests/slurm/test_wave_sizing_on_slurm.py``.
"""

from __future__ import annotations

import datetime as dt
import pathlib

import pytest

from stemma.core.engine.dispatch.pack_sizing import PackQueue, PackSizer
from stemma.core.engine.dispatch.wave_sizing import (
    PROBE_UNITS,
    WaveSizer,
    recorded_unit_seconds,
    units_per_element,
)
from stemma.core.engine.worker.worker_entry import UnitOutcome
from stemma.core.execution_records import StepEvent
from stemma.core.operations.time_limits import time_limit_seconds
from stemma.core.records import StepStatus

HOUR = 3600.0


def _completed(fingerprint: str, operation: str, minute: int, **metadata: object) -> StepEvent:
    return StepEvent(
        step_run_id=f"run-{fingerprint}",
        step_spec_id=fingerprint,
        pipeline_run_id="demo_20261201_000000_abcdef12",
        step_number=1,
        step_name="transform",
        status=StepStatus.COMPLETED,
        operation=operation,
        version="v1",
        params={},
        backend="slurm",
        timestamp=dt.datetime(2026, 12, 1, 10, minute, tzinfo=dt.UTC),
        metadata=metadata,
    )


@pytest.mark.parametrize(
    ("units", "unit_seconds", "expected"),
    [
        (10_000, 0.01, 1250),  # 180 s of 10 ms units is 18,000: cut in 8 to run in parallel
        (10_000, 2.0, 90),  # three minutes of 2 s units
        (10_000, 600.0, 1),  # a unit longer than an element: one each
        (5, 0.01, 1),  # five quick units: one each, all at once
    ],
)
def test_an_element_holds_about_three_minutes_of_work(
    units: int, unit_seconds: float, expected: int
) -> None:
    got = units_per_element(
        units, unit_seconds, element_seconds=180, time_limit_seconds=HOUR, max_elements=None
    )
    assert got == expected


def test_a_wave_of_short_units_is_spread_over_the_workers_that_run_at_once() -> None:
    for spread, expected in ((1, 10_000), (2, 5_000), (100, 100)):
        got = units_per_element(
            10_000,
            0.01,
            element_seconds=180,
            time_limit_seconds=HOUR,
            max_elements=None,
            spread=spread,
        )
        assert got == expected


def test_an_element_stays_under_half_the_time_limit() -> None:
    # 10 s units, a one-minute limit: 18 would be three minutes; 3 are half the limit.
    limit = time_limit_seconds("1")
    assert (
        units_per_element(
            100, 10.0, element_seconds=180, time_limit_seconds=limit, max_elements=None
        )
        == 3
    )


def test_a_wave_fits_in_one_array_when_the_time_limit_allows() -> None:
    # 100,000 one-second units, 180 per element: 556 elements, over a MaxArraySize of 100.
    assert (
        units_per_element(
            100_000, 1.0, element_seconds=180, time_limit_seconds=10 * HOUR, max_elements=100
        )
        == 1000
    )
    # ...unless that would break the time limit: the backend then splits the wave in arrays.
    assert (
        units_per_element(
            100_000, 1.0, element_seconds=180, time_limit_seconds=600, max_elements=100
        )
        == 300
    )


def test_history_is_the_same_step_first_then_the_newest_run_of_the_operation() -> None:
    completed = {
        "f-old": _completed("f-old", "demo.transform", 1, unit_seconds=4.0),
        "f-new": _completed("f-new", "demo.transform", 9, unit_seconds=2.0),
        "f-other": _completed("f-other", "demo.score", 30, unit_seconds=99.0),
        "f-none": _completed("f-none", "demo.transform", 40),  # before unit_seconds was kept
    }
    assert recorded_unit_seconds(completed, "f-old", "demo.transform") == 4.0
    assert recorded_unit_seconds(completed, "f-unseen", "demo.transform") == 2.0
    assert recorded_unit_seconds(completed, None, "demo.transform") == 2.0
    assert recorded_unit_seconds(completed, "f-unseen", "demo.unknown") is None


def _outcome(seconds: float) -> UnitOutcome:
    return UnitOutcome(execution_run_id="e", success=True, error=None, bundle=None, seconds=seconds)


def test_without_history_a_probe_wave_of_single_units_sizes_the_rest() -> None:
    sizer = WaveSizer(
        unit_seconds=None, element_seconds=60, time_limit_seconds=HOUR, max_elements=None
    )
    assert sizer.window() == PROBE_UNITS
    assert sizer.per_element(PROBE_UNITS) == 1
    sizer.learn([_outcome(0.5), _outcome(1.5), _outcome(0.0)])  # (0: it never ran)
    assert sizer.unit_seconds == 1.0
    assert sizer.window() is None  # the rest goes in one submission
    assert sizer.per_element(1000) == 60


def test_a_probe_that_says_nothing_keeps_one_unit_per_element() -> None:
    sizer = WaveSizer(
        unit_seconds=None, element_seconds=60, time_limit_seconds=HOUR, max_elements=None
    )
    sizer.learn([UnitOutcome.stopped(2)])
    assert sizer.window() is None
    assert sizer.per_element(1000) == 1


def test_a_step_records_how_long_its_units_ran(tmp_path: pathlib.Path) -> None:
    from stemma.core.examples import DataGenerator, SlowCopy
    from stemma.core.front.pipeline import Pipeline
    from stemma.core.store import open_run_store

    pipeline = Pipeline.create("paced", root=tmp_path, max_workers=2)
    made = pipeline.run(DataGenerator, params={"count": 4, "rows": 2})
    copied = pipeline.run(
        SlowCopy, inputs={"dataset": made.output("datasets")}, params={"seconds": 0.2}
    )
    pipeline.finalize()
    assert copied.success
    [final] = [
        e
        for e in open_run_store(tmp_path).step_events(pipeline.run_id)
        if e.step_name == copied.step_name and e.status == StepStatus.COMPLETED
    ]
    assert 0.2 <= final.metadata["unit_seconds"] < 10  # each unit slept 0.2 s in its worker


def test_a_whole_wave_is_cut_evenly_and_a_dead_element_goes_again_an_eighth_the_size() -> None:
    sizer = PackSizer(fixed=None, workers=2, whole_waves=True, size=16)
    queue = PackQueue(range(40), sizer)
    wave = queue.take()
    assert [len(pack) for pack in wave] == [16, 16, 8]  # no tail of ever smaller elements
    sizer.observe(16, 300.0)  # a slow element back: a wave's size is not learned as it goes
    assert sizer.size == 16
    sizer.died(16)
    queue.send_again(wave[0])
    again = queue.take()
    assert [len(pack) for pack in again] == [2] * 8
    assert queue.taken_again == 16  # (sent before: not counted as sent twice)
    assert [u for pack in again for u in pack] == list(range(16))


def test_small_steps_without_history_are_not_probed() -> None:
    sizer = WaveSizer(
        unit_seconds=None,
        element_seconds=60,
        time_limit_seconds=HOUR,
        max_elements=None,
        probe=False,
    )
    assert sizer.window() is None
    assert sizer.per_element(100) == 1
