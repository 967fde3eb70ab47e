"""The built-in operations through the real Pipeline, local backend and Delta store."""

import csv
import io
import pathlib
import statistics
from collections.abc import Callable

import pytest

from stemma.core.engine.references import StepResult
from stemma.core.examples import DataGenerator, MetricCalculator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.operations.builtins import (
    Criterion,
    Filter,
    IngestData,
    IngestFiles,
    Merge,
    Operator,
)
from stemma.core.operations.registry import get_operation
from stemma.core.operations.results import ExecuteInput
from stemma.storage import artifacts, executions, steps
from tests.roots_under_test import Root, new_root


@pytest.fixture
def root(tmp_path: pathlib.Path) -> Root:
    return new_root(tmp_path, "store")


def _write_csv(path: pathlib.Path, rows: int, *, offset: float = 0.0) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x,y\n" + "".join(f"{i},{i + offset}\n" for i in range(rows)))
    return path


def _ids(pipeline: Pipeline, result: StepResult, role: str) -> set[str]:
    return set(pipeline.artifact_ids(result.output(role)))


def _ingest(root: Root, paths: list[pathlib.Path]) -> tuple[StepResult, set[str]]:
    pipeline = Pipeline.create("ingest", root=root, max_workers=2)
    result = pipeline.run(IngestData, params={"paths": [str(p) for p in paths]})
    ids = _ids(pipeline, result, "data")
    pipeline.finalize()
    return result, ids


def _mean_y(content: bytes) -> float:
    return statistics.fmean(
        float(row["y"]) for row in csv.DictReader(io.StringIO(content.decode()))
    )


def test_builtins_are_registered_by_name() -> None:
    assert get_operation("ingest_data") is IngestData
    assert get_operation("ingest_files") is IngestFiles
    assert get_operation("merge") is Merge
    assert get_operation("filter") is Filter


def test_ingest_data_reads_each_csv_into_a_data_artifact_with_its_name_and_rows(
    root: Root, tmp_path: pathlib.Path
) -> None:
    paths = [_write_csv(tmp_path / "in" / "a.csv", 3), _write_csv(tmp_path / "in" / "b.csv", 5)]

    result, ids = _ingest(root, paths)

    assert (result.success, result.succeeded_count) == (True, 1)
    loaded = Pipeline.create("read", root=root).store.load_artifacts(ids)
    found = {a.original_name: (a.artifact_type, a.fields["row_count"]) for a in loaded.values()}
    assert found == {"a.csv": ("data", 3), "b.csv": ("data", 5)}
    assert {a.content for a in loaded.values()} == {p.read_bytes() for p in paths}


def test_ingest_data_edited_in_place_is_a_cache_miss_with_new_ids(
    root: Root, tmp_path: pathlib.Path
) -> None:
    path = _write_csv(tmp_path / "in" / "a.csv", 3)
    first, first_ids = _ingest(root, [path])
    _write_csv(path, 3, offset=0.5)  # same path, same size class, other content

    second, second_ids = _ingest(root, [path])

    assert first.metadata["cache"] is None
    assert second.metadata["cache"] is None  # a step-level miss: the key holds the content
    assert second.metadata["step_spec_id"] != first.metadata["step_spec_id"]
    assert second_ids.isdisjoint(first_ids)
    assert executions(root, success=True).height == 2


def test_ingest_data_identical_rerun_and_moved_file_are_step_hits(
    root: Root, tmp_path: pathlib.Path
) -> None:
    path = _write_csv(tmp_path / "in" / "a.csv", 4)
    _, first_ids = _ingest(root, [path])
    again, again_ids = _ingest(root, [path])
    target = tmp_path / "moved" / "a.csv"
    target.parent.mkdir()
    path.rename(target)

    after_move, moved_ids = _ingest(root, [target])

    assert again.metadata["cache"] == "step"
    assert after_move.metadata["cache"] == "step"  # the path is not in the key; name and bytes are
    assert first_ids == again_ids == moved_ids
    assert executions(root).height == 1


def test_ingest_data_missing_file_is_a_validation_error_and_writes_nothing(
    root: Root, tmp_path: pathlib.Path
) -> None:
    pipeline = Pipeline.create("bad", root=root, max_workers=1)
    missing = tmp_path / "nope.csv"

    with pytest.raises(ValueError, match=r"params\.paths: input file .*nope\.csv.* does not exist"):
        pipeline.submit(IngestData, params={"paths": [str(missing)]})

    pipeline.finalize()
    assert steps(root).height == 0


def test_ingest_data_refuses_a_file_edited_after_the_step_was_built(tmp_path: pathlib.Path) -> None:
    path = _write_csv(tmp_path / "a.csv", 2)
    op = IngestData.build(params={"paths": [str(path)]})
    _write_csv(path, 2, offset=1.0)
    execute_dir = tmp_path / "execute"
    execute_dir.mkdir()

    with pytest.raises(ValueError, match="changed after the step was built"):
        op.execute(ExecuteInput(execute_dir=execute_dir, log_path=tmp_path / "log", prepared={}))


def test_ingest_files_references_files_in_place_keyed_by_content(
    root: Root, tmp_path: pathlib.Path
) -> None:
    single = _write_csv(tmp_path / "in" / "one.csv", 2)
    tree = tmp_path / "in" / "tree"
    _write_csv(tree / "inner.csv", 3)

    pipeline = Pipeline.create("files", root=root, max_workers=2)
    first = pipeline.run(IngestFiles, params={"paths": [str(single), str(tree)]})
    first_ids = _ids(pipeline, first, "files")
    (tree / "inner.csv").write_text("x,y\n9,9\n")  # an edit deep inside the directory
    second = pipeline.run(IngestFiles, params={"paths": [str(single), str(tree)]})
    second_ids = _ids(pipeline, second, "files")
    pipeline.finalize()

    refs = pipeline.store.load_artifacts(first_ids)
    assert {a.artifact_type for a in refs.values()} == {"file_ref"}
    assert {a.fields["path"] for a in refs.values()} == {single.as_posix(), tree.as_posix()}
    assert first.output_types == {"files": "file_ref"}
    assert second.metadata["cache"] is None
    assert len(first_ids & second_ids) == 1  # the untouched file keeps its id


def test_merge_of_two_generators_passes_everything_through_creating_nothing(
    root: Root,
) -> None:
    pipeline = Pipeline.create("merge", root=root, max_workers=2)
    left = pipeline.run(DataGenerator, params={"count": 3, "seed": 1})
    right = pipeline.run(DataGenerator, params={"count": 2, "seed": 2})
    before = artifacts(root).height

    merged = pipeline.run(Merge, [left.output("datasets"), right.output("datasets")])
    scaled = pipeline.run(
        Transform, inputs={"dataset": merged.output("merged")}, params={"scale": 2.0}
    )
    merged_ids = _ids(pipeline, merged, "merged")
    expected = _ids(pipeline, left, "datasets") | _ids(pipeline, right, "datasets")
    pipeline.finalize()

    assert merged.success
    assert merged_ids == expected
    assert len(merged_ids) == 5
    assert artifacts(root).height == before + 5  # only the Transform's outputs are new
    assert scaled.succeeded_count == 5


def test_merge_rerun_is_a_step_hit(root: Root) -> None:
    def run() -> StepResult:
        pipeline = Pipeline.create("merge", root=root, max_workers=2)
        left = pipeline.run(DataGenerator, params={"count": 2, "seed": 1})
        right = pipeline.run(DataGenerator, params={"count": 2, "seed": 2})
        merged = pipeline.run(Merge, [left.output("datasets"), right.output("datasets")])
        pipeline.finalize()
        return merged

    run()
    again = run()

    assert again.metadata["cache"] == "step"


Criteria = list[dict[str, object]]


def _filtered(
    root: Root,
    criteria_for: Callable[[dict[str, float]], Criteria],
    *,
    scale: float | None = None,
) -> tuple[dict[str, float], set[str]]:
    """Generate, score (after an optional Transform), Filter the generated datasets.

    ``criteria_for`` gets each generated dataset's mean y, read from its own CSV; returns those
    means and the ids Filter kept.
    """
    pipeline = Pipeline.create("filter", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 6, "rows": 8, "seed": 7})
    datasets = pipeline.store.load_artifacts(_ids(pipeline, generated, "datasets"))
    means = {i: _mean_y(a.content or b"") for i, a in datasets.items()}
    scored_from = generated.output("datasets")
    if scale is not None:
        scored_from = pipeline.run(
            Transform, inputs={"dataset": scored_from}, params={"scale": scale}
        ).output("dataset")
    scored = pipeline.run(MetricCalculator, inputs={"dataset": scored_from})
    before = artifacts(root).height
    kept = pipeline.run(
        Filter,
        inputs={"dataset": generated.output("datasets")},
        params={"criteria": criteria_for(means)},
    )
    kept_ids = _ids(pipeline, kept, "dataset")
    pipeline.finalize()
    assert scored.succeeded_count == 6
    assert kept.success
    assert artifacts(root).height == before  # passthrough: nothing new
    return means, kept_ids


def test_filter_keeps_only_datasets_whose_mean_y_passes(root: Root) -> None:
    threshold: list[float] = []

    def above_the_median(means: dict[str, float]) -> Criteria:
        threshold.append(statistics.median(means.values()))
        return [{"metric": "mean_y", "operator": "gt", "value": threshold[0]}]

    means, kept = _filtered(root, above_the_median)

    assert kept == {i for i, mean in means.items() if mean > threshold[0]}
    assert 0 < len(kept) < len(means)


def test_filter_walks_lineage_through_a_transform_to_its_metrics(root: Root) -> None:
    threshold: list[float] = []

    def scaled_below_the_median(means: dict[str, float]) -> Criteria:
        threshold.append(2 * statistics.median(means.values()))
        return [{"metric": "mean_y", "operator": "le", "value": threshold[0]}]

    means, kept = _filtered(root, scaled_below_the_median, scale=2.0)

    # The metrics are of the doubled datasets, two generations below the filtered ones.
    assert kept == {i for i, mean in means.items() if 2 * mean <= threshold[0]}
    assert 0 < len(kept) < len(means)


def test_filter_needs_every_criterion_and_drops_datasets_without_the_metric(
    root: Root,
) -> None:
    _, kept_all = _filtered(
        root,
        lambda _: [
            {"metric": "mean_y", "operator": "ge", "value": 0.0},
            {"metric": "no_such_metric", "operator": "eq", "value": 1},
        ],
    )

    assert kept_all == set()


def test_filter_unknown_operator_is_a_validation_error_listing_the_accepted(
    root: Root,
) -> None:
    pipeline = Pipeline.create("bad", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 1})

    with pytest.raises(ValueError, match="operator") as raised:
        pipeline.submit(
            Filter,
            inputs={"dataset": generated.output("datasets")},
            params={"criteria": [{"metric": "mean_y", "operator": "gte", "value": 1}]},
        )

    pipeline.finalize()
    for accepted in ("gt", "ge", "lt", "le", "eq", "ne"):
        assert f"'{accepted}'" in str(raised.value)
    assert steps(root, name="filter").height == 0


@pytest.mark.parametrize(
    ("operator", "value", "observed", "holds"),
    [
        ("gt", 1, 2, True),
        ("gt", 1, 1, False),
        ("ge", 1, 1.0, True),
        ("lt", 1.5, 1, True),
        ("le", 1, 2, False),
        ("eq", "ok", "ok", True),
        ("ne", "ok", "no", True),
        ("gt", 1, "2", False),  # a string is not a number: no ordering
        ("gt", 0, True, False),  # nor is a bool
    ],
)
def test_criterion_compares_observed_values(
    operator: str, value: object, observed: object, holds: bool
) -> None:
    criterion = Criterion.model_validate({"metric": "m", "operator": operator, "value": value})

    assert criterion.operator is Operator(operator)
    assert criterion.holds(observed) is holds


def test_criterion_ordering_operator_refuses_a_non_number() -> None:
    with pytest.raises(ValueError, match="compares numbers"):
        Criterion.model_validate({"metric": "m", "operator": "lt", "value": "high"})


def test_filter_with_the_metrics_role_waits_for_them_and_is_keyed_by_them(
    root: Root,
) -> None:
    def run(scale: float) -> tuple[StepResult, set[str]]:
        pipeline = Pipeline.create("filter-metrics", root=root, max_workers=2)
        generated = pipeline.submit(DataGenerator, params={"count": 4, "rows": 8, "seed": 3})
        transformed = pipeline.submit(
            Transform, inputs={"dataset": generated.output("datasets")}, params={"scale": scale}
        )
        scored = pipeline.submit(
            MetricCalculator, inputs={"dataset": transformed.output("dataset")}
        )
        kept = pipeline.submit(  # submitted at once: it must wait for the metrics it is given
            Filter,
            inputs={"dataset": generated.output("datasets"), "metrics": scored.output("metrics")},
            params={"criteria": [{"metric": "mean_y", "operator": "gt", "value": 10.0}]},
        )
        result = kept.result()
        ids = set(pipeline.artifact_ids(kept.output("dataset")))
        pipeline.finalize()
        return result, ids

    # y is uniform on [0, 10]: unscaled, no mean passes 10; scaled by 4, every mean does.
    first, unscaled = run(1.0)
    second, scaled = run(4.0)
    assert first.success
    assert unscaled == set()
    assert second.metadata["cache"] is None  # the recomputed metrics changed the Filter's key
    assert len(scaled) == 4
