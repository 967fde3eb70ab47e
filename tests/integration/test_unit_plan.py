"""A step planned in chunks: counted first, keyed and looked up a chunk at a time."""

from __future__ import annotations

import pathlib
from collections.abc import Collection
from typing import Any

import pytest

from stemma.core.engine.dispatch import step_dispatch
from stemma.core.examples import CombineAll, DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.store import open_run_store
from stemma.storage import DeltaStore, executions


def _final_events(root: pathlib.Path, run_id: str) -> dict[int, Any]:
    events = open_run_store(root).step_events(run_id)
    return {e.step_number: e for e in events if e.status != "running"}


def test_a_step_of_several_lookup_chunks_answers_each_chunk_from_the_cache(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_dispatch, "LOOKUP_UNITS", 3)
    lookups: list[int] = []
    looked_up = DeltaStore.executions_by_key

    def counting(self: DeltaStore, keys: Collection[str]) -> dict[str, Any]:
        lookups.append(len(keys))
        return looked_up(self, keys)

    monkeypatch.setattr(DeltaStore, "executions_by_key", counting)
    pipeline = Pipeline.create("chunks", root=tmp_path, max_workers=2)
    made = pipeline.run(DataGenerator, params={"count": 10, "rows": 3})
    ids = sorted(pipeline.artifact_ids(made.output("datasets")))
    first = pipeline.run(Transform, inputs={"dataset": ids[:6]}, params={"scale": 2.0})
    lookups.clear()
    before = executions(tmp_path).height
    every = pipeline.run(
        Transform, inputs={"dataset": made.output("datasets")}, params={"scale": 2.0}
    )
    events = _final_events(tmp_path, pipeline.run_id)
    outputs_first = set(pipeline.artifact_ids(first.output("dataset")))
    outputs_every = set(pipeline.artifact_ids(every.output("dataset")))
    pipeline.finalize()
    assert lookups == [3, 3, 3, 1]  # ten units, three at a time
    assert (every.total_count, every.succeeded_count, every.failed_count) == (10, 10, 0)
    assert events[every.step_number].metadata["execution_cache_hits"] == 6
    assert executions(tmp_path).height == before + 4  # only the four new units ran
    assert len(outputs_every) == 10
    assert outputs_first < outputs_every


def test_a_batching_error_found_while_counting_stops_the_step_before_any_unit_runs(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_dispatch, "LOOKUP_UNITS", 1)
    pipeline = Pipeline.create("cap", root=tmp_path, max_workers=1)
    left = pipeline.run(DataGenerator, params={"count": 3, "prefix": "a"})
    right = pipeline.run(DataGenerator, params={"count": 2, "prefix": "b", "seed": 1})
    before = executions(tmp_path).height
    combined = pipeline.run(
        CombineAll,
        inputs={"left": left.output("datasets"), "right": right.output("datasets")},
        execution={"artifacts_per_unit": 1, "max_artifacts_per_unit": 1},
    )
    pipeline.finalize()
    assert combined.metadata["status"] == "failed"
    assert "max_artifacts_per_unit=1" in str(combined.metadata["error"])
    assert executions(tmp_path).height == before  # counted first: nothing was sent


def test_a_lookup_failing_after_units_ran_fails_the_step_and_keeps_what_ran(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Windows of 4 units (one worker, one unit a pack), lookups of 5: the second lookup comes
    # after the first window ran.
    monkeypatch.setattr(step_dispatch, "LOOKUP_UNITS", 5)
    monkeypatch.setattr(step_dispatch, "MIN_WINDOW_UNITS", 1)
    lookups: list[int] = []
    looked_up = DeltaStore.executions_by_key

    def failing_third(self: DeltaStore, keys: Collection[str]) -> dict[str, Any]:
        lookups.append(len(keys))
        if len(lookups) == 3:  # the generator's, the step's first chunk, then this one
            raise OSError("the executions table went away")
        return looked_up(self, keys)

    monkeypatch.setattr(DeltaStore, "executions_by_key", failing_third)
    pipeline = Pipeline.create("lost-lookup", root=tmp_path, max_workers=1)
    made = pipeline.run(DataGenerator, params={"count": 10, "rows": 3})
    before = executions(tmp_path).height
    step = pipeline.run(
        Transform, inputs={"dataset": made.output("datasets")}, execution={"units_per_worker": 1}
    )
    pipeline.finalize()
    assert step.metadata["status"] == "failed"
    assert "after 4 ran" in str(step.metadata["error"])
    assert "went away" in str(step.metadata["error"])
    assert step.succeeded_count == 4
    assert executions(tmp_path).height == before + 4  # the window that ran is committed
