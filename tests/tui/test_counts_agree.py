"""A 20-unit step cancelled part way: every view counts its units the same way.

``StepResult``, the live state file, ``stemma status --format json``, the event log's history
and the dashboard (its model and its run screen at 80x24) show the same total, succeeded,
cached, failed and cancelled units, and they add up to the total. The second run answers the
first run's finished units from the execution cache, so ``cached`` is counted too.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot

from stemma.core.cli.main import main
from stemma.core.engine.references import StepResult
from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline
from stemma.core.live import StepState, read_state
from stemma.core.runs.run_lookup import history_events
from stemma.core.runs.run_rows import steps_from_history
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.widgets.tables import table_at

from .conftest import drive, row_count, until

UNITS = 20
COPY = 1
"""The slow step's number."""


def _cancelled_part_way(root: Path, *, after: int) -> tuple[str, StepResult]:
    """Run generate → slow copy of 20 units; cancel once ``after`` units have succeeded."""
    pipeline = Pipeline.create("counted", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": UNITS, "rows": 2})
    copied = pipeline.submit(
        SlowCopy,
        inputs={"dataset": generated.output("datasets")},
        params={"seconds": 0.4},
        execution={"units_per_worker": 1},
    )
    deadline = time.monotonic() + 120
    while len(steps := read_state(root, pipeline.run_id).steps) <= COPY or (
        steps[COPY].succeeded < after
    ):
        assert time.monotonic() < deadline, "the slow step never got going"
        time.sleep(0.05)
    pipeline.cancel()
    result = copied.result()
    pipeline.finalize()
    return pipeline.run_id, result


def _counts(step: StepState) -> tuple[int, int, int, int, int]:
    return (step.total, step.succeeded, step.cached, step.failed, step.cancelled)


def _status_json(root: Path, run_id: str, capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    capsys.readouterr()
    assert main(["status", run_id, "--root", str(root), "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)[COPY]
    return {key: int(row[key]) for key in ("total", "succeeded", "cached", "failed", "cancelled")}


def _check_every_view(
    root: Path, run_id: str, result: StepResult, capsys: pytest.CaptureFixture[str]
) -> tuple[int, int, int, int, int]:
    expected = (
        result.total_count,
        result.succeeded_count,
        result.cached_count,
        result.failed_count,
        result.cancelled_count,
    )
    total, succeeded, _, failed, cancelled = expected
    assert total == UNITS
    assert succeeded + failed + cancelled == total  # cached units are part of succeeded
    assert cancelled > 0, "the cancel came too late to stop any unit"
    state = read_state(root, run_id).steps[COPY]
    assert (state.status, state.running) == ("cancelled", 0)
    assert _counts(state) == expected
    shown = _status_json(root, run_id, capsys)
    assert tuple(shown.values()) == expected
    assert _counts(steps_from_history(history_events(root, run_id))[COPY]) == expected
    assert _counts(DashboardClient(root).run(run_id).steps[COPY]) == expected
    return expected


def _run_screen_row(root: Path, run_id: str) -> dict[str, str]:
    """The slow step's row on the run screen at 80x24, by column label."""
    shown: dict[str, str] = {}

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run(run_id)
        await until(pilot, lambda: row_count(app, "#steps") == 2, "the steps")
        table = table_at(app.screen, "#steps")
        labels = [str(column.label) for column in table.columns.values()]
        shown.update(zip(labels, (str(cell) for cell in table.get_row_at(COPY)), strict=True))

    drive(root, scenario)
    return shown


def test_a_cancelled_step_counts_the_same_in_every_view_and_adds_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "store"
    first_id, first = _cancelled_part_way(root, after=3)
    _check_every_view(root, first_id, first, capsys)
    assert first.cached_count == 0
    # Again: what the first run finished is answered by the execution cache.
    second_id, second = _cancelled_part_way(root, after=first.succeeded_count + 2)
    total, succeeded, cached, failed, cancelled = _check_every_view(root, second_id, second, capsys)
    assert cached == first.succeeded_count
    row = _run_screen_row(root, second_id)
    assert (row["status"], row["done"]) == (
        "cancelled",
        f"{succeeded + failed + cancelled}/{total}",
    )
    assert (row["hit"], row["fail"], row["cncl"], row["run"]) == (
        str(cached),
        str(failed),
        str(cancelled),
        "0",
    )
