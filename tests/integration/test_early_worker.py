"""A run starts its first local worker as soon as it knows a step will execute, never before.

A worker's start-up (half a second of imports) then passes beside the orchestrator's work: the
store's import and recovery when a new run opens a root with no history (nothing there can be
answered), else the step's running event, input reads and unit planning once its first step
misses the cache. A fully cached run starts no worker at all, and nothing is left behind when a
run ends or cannot open.
"""

from __future__ import annotations

import pathlib

import pytest

from stemma.core.errors import StoreUnavailableError
from stemma.core.examples import Combine, DataGenerator
from stemma.core.front.pipeline import Pipeline
from tests.core.worker_children import spawned_workers


def _build_inputs(pipeline: Pipeline) -> tuple[object, object]:
    left = pipeline.run(DataGenerator, params={"count": 2, "prefix": "a"})
    right = pipeline.run(DataGenerator, params={"count": 3, "prefix": "b"})
    return left.output("datasets"), right.output("datasets")


def test_a_new_run_on_a_root_with_no_history_starts_one_worker_as_it_opens(
    tmp_path: pathlib.Path,
) -> None:
    before = spawned_workers()
    pipeline = Pipeline.create("early", root=tmp_path / "root", max_workers=2)
    try:
        assert len(spawned_workers() - before) == 1
    finally:
        pipeline.finalize()
    assert not spawned_workers() - before


def test_a_fully_cached_run_starts_no_worker_and_a_step_that_executes_starts_one_first(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "root"
    first = Pipeline.create("early", root=root, max_workers=2)
    _build_inputs(first)
    first.finalize()
    before = spawned_workers()
    again = Pipeline.create("early", root=root, max_workers=2)
    try:
        left, right = _build_inputs(again)  # both answered by the step cache
        assert not spawned_workers() - before
        # Zip of 2 and 3 inputs: the step executes, and fails while planning its units, before
        # any unit is sent; its worker was started as it began (one, not the whole pool).
        combined = again.run(Combine, inputs={"left": left, "right": right})
        assert combined.metadata["status"] == "failed"
        assert len(spawned_workers() - before) == 1
    finally:
        again.finalize()
    assert not spawned_workers() - before


def test_a_run_that_skips_the_cache_starts_one_worker_as_it_opens(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "root"
    first = Pipeline.create("early", root=root, max_workers=1)
    first.run(DataGenerator, params={"count": 1})
    first.finalize()
    before = spawned_workers()
    pipeline = Pipeline.create("early", root=root, max_workers=2, skip_cache=True)
    try:
        assert len(spawned_workers() - before) == 1
    finally:
        pipeline.finalize()
    assert not spawned_workers() - before


def test_a_resumed_run_starts_no_worker_until_a_step_executes(tmp_path: pathlib.Path) -> None:
    first = Pipeline.create("early", root=tmp_path / "root", max_workers=1)
    first.run(DataGenerator, params={"count": 1})
    first.finalize()
    before = spawned_workers()
    pipeline = Pipeline.resume(tmp_path / "root", name="early", max_workers=2)
    try:
        assert not spawned_workers() - before
    finally:
        pipeline.finalize()


def test_a_run_whose_store_cannot_open_leaves_no_worker(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEMMA_STORE", "no-such-store")
    before = spawned_workers()
    with pytest.raises(StoreUnavailableError, match="no-such-store"):
        Pipeline.create("early", root=tmp_path / "root", max_workers=2, skip_cache=True)
    assert not spawned_workers() - before
