"""Composites on the real Delta store and the local backend: collapsed and expanded."""

import pathlib

import polars as pl
import pytest

from stemma.core.examples import DataGenerator, TransformThenScore
from stemma.core.front.pipeline import Pipeline
from stemma.storage import artifacts, executions, lineage, steps
from tests.roots_under_test import Root, new_root


@pytest.fixture
def root(tmp_path: pathlib.Path) -> Root:
    return new_root(tmp_path, "store")


def _collapsed(root: Root, intermediates: str | None) -> tuple[set[str], set[str], str | None]:
    """Generate two datasets, run the composite on them; (dataset ids, metric ids, cache)."""
    pipeline = Pipeline.create("composite", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 5})
    options = {} if intermediates is None else {"intermediates": intermediates}
    scored = pipeline.run(
        TransformThenScore,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": 2.0},
        **options,
    )
    assert scored.success, scored
    datasets = set(pipeline.artifact_ids(generated.output("datasets")))
    metrics = set(pipeline.artifact_ids(scored.output("metrics")))
    pipeline.finalize()
    return datasets, metrics, scored.metadata.get("cache")


def _edges_up(root: Root, metrics: set[str]) -> pl.DataFrame:
    return pl.concat([lineage(root, metric, "up") for metric in sorted(metrics)])


def _counts(root: Root) -> dict[str, int]:
    return dict(artifacts(root)["artifact_type"].value_counts().rows())


def test_collapsed_discard_commits_only_final_artifacts_with_shortcut_edges(
    root: Root,
) -> None:
    datasets, metrics, _ = _collapsed(root, None)  # discard is the default
    assert len(metrics) == 2
    assert _counts(root) == {"data": 2, "metric": 2}  # no transformed datasets
    edges = _edges_up(root, metrics)
    assert edges.height == 2
    assert set(edges["source_artifact_id"]) == datasets
    assert set(edges["target_artifact_id"]) == metrics
    assert edges["step_boundary"].to_list() == [True, True]
    assert set(edges["source_role"]) == {"dataset"}
    assert set(edges["target_role"]) == {"metrics"}
    composite_steps = steps(root, name="example.transform_then_score", status="completed")
    assert composite_steps.height == 1


def test_collapsed_persist_commits_intermediates_with_internal_edges_off_boundary(
    root: Root,
) -> None:
    datasets, metrics, _ = _collapsed(root, "persist")
    assert _counts(root) == {"data": 4, "metric": 2}
    edges = _edges_up(root, metrics)
    shortcut = edges.filter(
        pl.col("source_artifact_id").is_in(list(datasets)) & (pl.col("depth") == 1)
    )
    assert shortcut.height == 2
    assert shortcut["step_boundary"].all()
    internal = edges.filter(~pl.col("step_boundary"))
    assert internal.height == 4  # dataset → transformed, transformed → metric, for each
    transformed = set(
        internal.filter(pl.col("target_artifact_id").is_in(list(metrics)))["source_artifact_id"]
    )
    assert len(transformed) == 2
    assert not transformed & datasets


def test_collapsed_expose_marks_internal_edges_as_step_boundaries(root: Root) -> None:
    datasets, metrics, _ = _collapsed(root, "expose")
    assert _counts(root) == {"data": 4, "metric": 2}
    edges = _edges_up(root, metrics)
    assert edges.height == 4
    assert edges["step_boundary"].all()
    direct = edges.filter(pl.col("target_artifact_id").is_in(list(metrics)))
    assert not set(direct["source_artifact_id"]) & datasets  # no shortcut: through intermediates
    assert set(edges.filter(pl.col("depth") == 2)["source_artifact_id"]) == datasets


def test_collapsed_rerun_is_a_step_hit_and_the_policy_is_part_of_the_key(
    root: Root,
) -> None:
    _, first, _ = _collapsed(root, "discard")
    before = executions(root).height
    _, again, cache = _collapsed(root, "discard")
    assert cache == "step"
    assert again == first
    assert executions(root).height == before
    _, persisted, cache = _collapsed(root, "persist")
    assert cache is None
    assert persisted == first
    assert _counts(root) == {"data": 4, "metric": 2}


def test_collapsed_rejects_an_unknown_policy_and_intermediates_on_a_plain_operation(
    root: Root,
) -> None:
    pipeline = Pipeline.create("composite", root=root)
    with pytest.raises(ValueError, match="unknown intermediates 'keep'"):
        pipeline.submit(TransformThenScore, inputs={"dataset": []}, intermediates="keep")
    with pytest.raises(ValueError, match="only for composite"):
        pipeline.submit(DataGenerator, intermediates="persist")
    pipeline.finalize()
    assert steps(root).height == 0


def _expanded(root: Root) -> tuple[Pipeline, list[str | None], set[str]]:
    pipeline = Pipeline.create("expanded", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 5})
    expanded = pipeline.expand(
        TransformThenScore,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": 2.0},
        prefix="tts",
    )
    results = expanded.result()
    assert [r.step_name for r in results] == ["tts.example.transform", "tts.example.metrics"]
    assert all(r.success for r in results)
    metrics = set(pipeline.artifact_ids(expanded.output("metrics")))
    pipeline.finalize()
    return pipeline, [r.metadata.get("cache") for r in results], metrics


def test_expanded_composite_runs_each_operation_as_a_named_step(root: Root) -> None:
    pipeline, caches, metrics = _expanded(root)
    assert caches == [None, None]
    assert len(metrics) == 2
    completed = steps(root, status="completed")["step_name"].to_list()
    assert completed == ["example.generate", "tts.example.transform", "tts.example.metrics"]
    assert "tts.example.metrics" in pipeline
    assert _counts(root) == {"data": 4, "metric": 2}  # every step commits (expose)
    edges = _edges_up(root, metrics)
    assert edges.height == 4
    assert edges["step_boundary"].all()


def test_expanded_composite_identical_rerun_is_all_step_hits(root: Root) -> None:
    _, _, first = _expanded(root)
    before = executions(root).height
    _, caches, again = _expanded(root)
    assert caches == ["step", "step"]
    assert again == first
    assert executions(root).height == before


def test_expanded_composite_refuses_policies_it_cannot_honour(root: Root) -> None:
    pipeline = Pipeline.create("expanded", root=root)
    with pytest.raises(ValueError, match="always 'expose'"):
        pipeline.expand(TransformThenScore, inputs={"dataset": []}, intermediates="discard")
    with pytest.raises(ValueError, match="not a composite"):
        pipeline.expand(DataGenerator)
    pipeline.finalize()
    assert steps(root).height == 0
