"""Pairing, role-aware keys, passthrough and cache policies through the real Pipeline."""

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
import polars as pl
import pytest
from spec_operations import Grade

from stemma.core.examples import (
    Combine,
    CombineAll,
    DataGenerator,
    Fail,
    MetricCalculator,
    Transform,
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


def test_anchor_matching_pairs_each_dataset_with_its_own_metric_and_source(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "store"
    pipeline = Pipeline.create("anchor", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3})
    transformed = pipeline.run(Transform, inputs={"dataset": generated.output("datasets")})
    scaled = sorted(pipeline.artifact_ids(transformed.output("dataset")))
    scored = pipeline.run(MetricCalculator, inputs={"dataset": scaled[:2]})  # not the third
    graded = pipeline.run(
        Grade,
        inputs={
            "dataset": transformed.output("dataset"),
            "metrics": scored.output("metrics"),
            "source": generated.output("datasets"),
        },
    )
    pipeline.finalize()
    # Two complete matches, one unit each; the dataset without a metric is left out.
    assert (graded.total_count, graded.succeeded_count, graded.failed_count) == (2, 2, 0)
    grades = pipeline.store.load_artifacts(_offered(pipeline, 3, "grade"))
    ancestry = pipeline.store.ancestry(scaled + _offered(pipeline, 2, "metrics"))
    paired = [json.loads(g.content or b"{}") for g in grades.values()]
    assert sorted(p["dataset"][0] for p in paired) == scaled[:2]
    for pair in paired:
        (dataset,), (metric,), (source,) = pair["dataset"], pair["metrics"], pair["source"]
        assert dataset in ancestry[metric]  # its own metric, not its neighbour's
        assert source in ancestry[dataset]  # its own source dataset
    for grade_id, grade in grades.items():  # its lineage goes to what it was paired with
        pair = json.loads(grade.content or b"{}")
        edges = lineage(root, grade_id, direction="up", max_depth=1)
        assert pair["dataset"][0] in edges["source_artifact_id"].to_list()
        assert set(edges["source_artifact_id"]) <= {i for ids in pair.values() for i in ids}
