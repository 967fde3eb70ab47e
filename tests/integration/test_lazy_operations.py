"""Operations as lazy steps: built with apply(), lowered and run like function steps."""

from __future__ import annotations

import pathlib

import pytest

from stemma.core import ArtifactStep, apply, lower, resolve, run
from stemma.core.errors import LoweringError
from stemma.core.examples import DataGenerator, MetricCalculator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.graph.operation_steps import output_of
from stemma.storage import executions


def _graph(scale: float) -> tuple[ArtifactStep, ArtifactStep, ArtifactStep]:
    generated = apply("gen", DataGenerator, params={"count": 3, "rows": 4})
    transformed = apply("scale", Transform, params={"scale": scale}, dataset=generated)
    scored = apply("score", MetricCalculator, dataset=output_of(transformed, "dataset"))
    return generated, transformed, scored


def test_operation_steps_run_lazily_with_the_same_artifacts_as_a_pipeline(
    tmp_path: pathlib.Path,
) -> None:
    generated, transformed, scored = _graph(2.0)
    run(scored, root=tmp_path / "lazy")
    value = resolve(scored, root=tmp_path / "lazy").value
    assert len(value["outputs"]["metrics"]) == 3
    assert value["failed"] == 0

    pipeline = Pipeline.create("direct", root=tmp_path / "direct", max_workers=2)
    gen = pipeline.run(DataGenerator, params={"count": 3, "rows": 4})
    tr = pipeline.run(Transform, inputs={"dataset": gen.output("datasets")}, params={"scale": 2.0})
    sc = pipeline.run(MetricCalculator, inputs={"dataset": tr.output("dataset")})
    direct = sorted(pipeline.artifact_ids(sc.output("metrics")))
    pipeline.finalize()
    assert value["outputs"]["metrics"] == direct  # one engine: the same content, the same ids
    del generated, transformed


def test_operation_steps_rerun_only_what_changed(tmp_path: pathlib.Path) -> None:
    run(_graph(2.0)[2], root=tmp_path)
    before = executions(tmp_path).height
    _, _, again = _graph(2.0)
    assert resolve(again, root=tmp_path).cached  # a function-step hit: no Pipeline at all
    run(again, root=tmp_path)
    assert executions(tmp_path).height == before
    generated, transformed, scored = _graph(3.0)
    run(scored, root=tmp_path)
    assert resolve(generated, root=tmp_path).cached
    rows = executions(tmp_path)
    assert rows.height > before
    redone = set(rows.slice(before).get_column("operation").to_list())
    # One execution row per unit, named by its operation (no wrapping function step); never
    # the generator's.
    assert redone == {"example.transform", "example.metrics"}
    del transformed


def test_operation_step_keys_hold_params_and_upstream_keys() -> None:
    _, low, _ = _graph(2.0)
    _, high, _ = _graph(3.0)
    assert lower(low).fingerprint != lower(high).fingerprint
    assert lower(low).version == "v0"


def test_operation_steps_refuse_bad_params_and_roles_at_apply() -> None:
    with pytest.raises(ValueError, match="scael"):
        apply("bad", Transform, params={"scael": 2}, dataset=["0" * 32])
    with pytest.raises(LoweringError, match="unknown input role"):
        apply("bad", Transform, data=["0" * 32])
    with pytest.raises(LoweringError, match="missing required input role"):
        apply("bad", Transform)
    with pytest.raises(LoweringError, match="needs a version"):
        apply("plain", print)


def test_a_single_string_for_a_role_is_refused_at_apply() -> None:
    with pytest.raises(LoweringError, match="got a single string"):
        apply("bad", Transform, dataset="0" * 32)


class _Scale:
    def __init__(self, x: int) -> None:
        self.x = x


def test_a_plain_class_is_still_a_function_step(tmp_path: pathlib.Path) -> None:
    step = apply("cls", _Scale, version="v1", x=3)
    assert lower(step).name == "cls"
