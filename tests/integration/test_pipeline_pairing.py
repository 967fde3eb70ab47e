"""Pairing, role-aware keys, passthrough and cache policies through the real Pipeline."""

import pathlib

import polars as pl
import pytest

from stemma.core.examples import (
    Combine,
    CombineAll,
    DataGenerator,
    Fail,
    Wait,
)
from stemma.core.front.pipeline import Pipeline
from stemma.storage import artifacts, executions, lineage


def _offered(pipeline: Pipeline, step_number: int, role: str) -> list[str]:
    return list(pipeline.artifact_ids(pipeline[step_number].output(role)))


def test_cross_product_2x3_makes_6_outputs_with_shared_group_ids(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "store"
    pipeline = Pipeline.create("cross", root=root, max_workers=2)
    left = pipeline.run(DataGenerator, params={"count": 2, "prefix": "a"})
    right = pipeline.run(DataGenerator, params={"count": 3, "prefix": "b", "seed": 1})
    combined = pipeline.run(
        CombineAll, inputs={"left": left.output("datasets"), "right": right.output("datasets")}
    )
    pipeline.finalize()
    assert (combined.succeeded_count, combined.failed_count) == (6, 0)
    outputs = _offered(pipeline, 2, "combined")
    assert len(outputs) == 6
    group_ids: set[str] = set()
    for output in outputs:
        edges = lineage(root, output, direction="up", max_depth=1)
        assert sorted(edges["source_role"].to_list()) == ["left", "right"]
        (group,) = set(edges["group_id"].to_list())
        assert group is not None
        group_ids.add(group)
    assert len(group_ids) == 6


def test_zip_length_mismatch_fails_the_step_naming_the_lengths(tmp_path: pathlib.Path) -> None:
    pipeline = Pipeline.create("zip", root=tmp_path / "store", max_workers=1)
    left = pipeline.run(DataGenerator, params={"count": 2, "prefix": "a"})
    right = pipeline.run(DataGenerator, params={"count": 3, "prefix": "b"})
    combined = pipeline.run(
        Combine, inputs={"left": left.output("datasets"), "right": right.output("datasets")}
    )
    pipeline.finalize()
    assert combined.metadata["status"] == "failed"
    assert not combined.success
    error = str(combined.metadata["error"])
    assert "left" in error
    assert "right" in error
    assert "2" in error
    assert "3" in error


def test_swapping_two_roles_inputs_is_not_a_cache_hit(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "store"
    pipeline = Pipeline.create("swap", root=root, max_workers=2)
    a = pipeline.run(DataGenerator, params={"count": 2, "prefix": "a"})
    b = pipeline.run(DataGenerator, params={"count": 2, "prefix": "b", "seed": 1})
    straight = pipeline.run(
        Combine, inputs={"left": a.output("datasets"), "right": b.output("datasets")}
    )
    before = executions(root).height
    swapped = pipeline.run(
        Combine, inputs={"left": b.output("datasets"), "right": a.output("datasets")}
    )
    pipeline.finalize()
    assert straight.succeeded_count == swapped.succeeded_count == 2
    assert swapped.metadata["cache"] is None
    assert executions(root).height == before + 2  # neither a step hit nor execution hits
    assert set(_offered(pipeline, 2, "combined")).isdisjoint(_offered(pipeline, 3, "combined"))


def test_passthrough_operation_creates_no_artifacts(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "store"
    pipeline = Pipeline.create("passthrough", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 2})
    count = artifacts(root).height
    waited = pipeline.run(
        Wait, inputs={"dataset": generated.output("datasets")}, params={"seconds": 0}
    )
    pipeline.finalize()
    assert waited.success
    assert artifacts(root).height == count
    assert sorted(_offered(pipeline, 1, "dataset")) == sorted(_offered(pipeline, 0, "datasets"))


def test_cache_policies_after_a_partial_failure(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "store"

    def run_once(policy: str) -> tuple[str | None, int]:
        pipeline = Pipeline.create("policy", root=root, max_workers=1, cache_policy=policy)
        generated = pipeline.run(DataGenerator, params={"count": 3})
        failing = pipeline.run(
            Fail, inputs={"dataset": generated.output("datasets")}, params={"match": "dataset_1"}
        )
        pipeline.finalize()
        return failing.metadata["cache"], failing.failed_count

    assert run_once("all_succeeded") == (None, 1)
    before = executions(root)
    # ALL_SUCCEEDED: a step with a failed unit is no step hit; its good units are execution
    # hits, and only the failed one runs (and fails) again.
    assert run_once("all_succeeded") == (None, 1)
    after = executions(root)
    assert after.height == before.height + 1
    assert after.filter(~pl.col("success")).height == 2
    # STEP_COMPLETED: the completed step is reused as it is.
    assert run_once("step_completed") == ("step", 1)
    assert executions(root).height == after.height


def test_a_list_of_file_paths_feeds_a_curator_keyed_by_content(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "store"
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("x,y\n1,2\n")
    second.write_text("x,y\n3,4\n")

    def run() -> tuple[str | None, list[str]]:
        pipeline = Pipeline.create("files", root=root, max_workers=1)
        waited = pipeline.run(Wait, [first, str(second)], params={"seconds": 0})
        ids = sorted(pipeline.artifact_ids(waited.output("dataset")))
        pipeline.finalize()
        return waited.metadata["cache"], ids

    cache, ids = run()
    assert cache is None
    assert len(ids) == 2
    kinds = artifacts(root).filter(pl.col("artifact_id").is_in(ids))["artifact_type"].to_list()
    assert kinds == ["file_ref", "file_ref"]
    assert run() == ("step", ids)  # the same content: a step-level hit
    second.write_text("x,y\n3,5\n")  # edited in place: a miss, and a new file-ref id
    cache, edited = run()
    assert cache is None
    assert len(set(edited) - set(ids)) == 1


def test_a_list_of_file_paths_is_refused_for_creators_and_missing_files(
    tmp_path: pathlib.Path,
) -> None:
    from stemma.core.examples import Transform

    pipeline = Pipeline.create("files", root=tmp_path / "store", max_workers=1)
    present = tmp_path / "a.csv"
    present.write_text("x,y\n1,2\n")
    with pytest.raises(ValueError, match="only for curators"):
        pipeline.submit(Transform, [present])
    with pytest.raises(ValueError, match="does not exist"):
        pipeline.submit(Wait, [tmp_path / "missing.csv"])
    pipeline.finalize()


def test_a_step_reading_an_upstream_that_ran_again_is_no_stale_step_hit(
    tmp_path: pathlib.Path,
) -> None:
    from stemma.core.examples import FailWhileMarked, MetricCalculator

    root, marker = tmp_path / "store", tmp_path / "fault"
    marker.touch()

    def run() -> tuple[int, int, str | None]:
        pipeline = Pipeline.create("flaky", root=root, max_workers=1)
        generated = pipeline.run(DataGenerator, params={"count": 3})
        flaky = pipeline.run(
            FailWhileMarked,
            inputs={"dataset": generated.output("datasets")},
            params={"marker": str(marker), "match": "dataset_1"},
        )
        scored = pipeline.run(MetricCalculator, inputs={"dataset": flaky.output("dataset")})
        metrics = len(pipeline.artifact_ids(scored.output("metrics")))
        pipeline.finalize()
        return flaky.succeeded_count, metrics, scored.metadata["cache"]

    assert run() == (2, 2, None)
    marker.unlink()  # the fault is gone: the failed unit reruns and succeeds
    succeeded, metrics, cache = run()
    assert succeeded == 3
    assert metrics == 3  # the metrics step saw the third dataset, not its stale step hit
    assert cache is None
