"""A composite collapsed in one worker: wiring, intermediates policies, failures (fake store)."""

import pathlib
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from worker_fakes import FakeStore, WtBoom, WtScale, csv_bytes, final, group, make_unit

from stemma.core.engine.worker.worker import run_unit
from stemma.core.examples import MetricCalculator
from stemma.core.execution_records import LineageEdge
from stemma.core.operations import DataDraft, InputSpec, OutputSpec
from stemma.core.operations.composite import CompositeContext, CompositeDefinition, Intermediates


class TwiceScaled(CompositeDefinition):
    name = "ct_twice_scaled"
    inputs: ClassVar = {"data": InputSpec(artifact_type="data")}
    outputs: ClassVar = {"scored": OutputSpec(artifact_type="metric")}

    def compose(self, ctx: CompositeContext[Any]) -> None:
        once = ctx.run(WtScale, inputs={"data": ctx.input("data")})
        twice = ctx.run(WtScale, inputs={"data": once.output("data")})
        scored = ctx.run(MetricCalculator, inputs={"dataset": twice.output("data")})
        ctx.output("scored", scored.output("metrics"))


class Exploding(CompositeDefinition):
    name = "ct_exploding"
    inputs: ClassVar = {"data": InputSpec(artifact_type="data")}
    outputs: ClassVar = {"data": OutputSpec(artifact_type="data")}

    def compose(self, ctx: CompositeContext[Any]) -> None:
        once = ctx.run(WtScale, inputs={"data": ctx.input("data")})
        boom = ctx.run(WtBoom, inputs={"data": once.output("data")})
        ctx.output("data", boom.output("data"))


class Miswired(CompositeDefinition):
    name = "ct_miswired"
    inputs: ClassVar = {"data": InputSpec(artifact_type="data")}
    outputs: ClassVar = {"data": OutputSpec(artifact_type="data")}

    def compose(self, ctx: CompositeContext[Any]) -> None:
        once = ctx.run(WtScale, inputs={"data": ctx.input("data")})
        ctx.output("data", once.output("dataset"))


def _run(tmp_path: Path, op: CompositeDefinition) -> tuple[FakeStore, str]:
    source = final(DataDraft.draft(csv_bytes([(1, 2), (3, 4)]), "design_1.csv"))
    store = FakeStore(tmp_path, [source])
    run_unit(make_unit(op, tmp_path, group(data=[source])), store)
    return store, source.artifact_id


def _pairs(edges: tuple[LineageEdge, ...]) -> list[tuple[str, str, bool]]:
    return [(e.source_role, e.target_role, e.step_boundary) for e in edges]


def test_discard_stages_only_the_final_metric_and_a_shortcut_edge(tmp_path: Path) -> None:
    store, source = _run(tmp_path, TwiceScaled())
    record = store.record
    assert record.success, record.error
    (metric,) = record.artifacts
    assert metric.artifact_type == "metric"
    assert record.outputs == {"scored": (metric.artifact_id,)}
    assert [(e.source_artifact_id, e.target_artifact_id) for e in record.edges] == [
        (source, metric.artifact_id)
    ]
    assert _pairs(record.edges) == [("data", "scored", True)]
    assert record.metadata["composite"] == {
        "intermediates": "discard",
        "operations": ["wt_scale", "wt_scale", "example.metrics"],
    }


def test_persist_stages_intermediates_with_internal_edges_off_the_boundary(
    tmp_path: Path,
) -> None:
    store, _ = _run(tmp_path, TwiceScaled(intermediates=Intermediates.PERSIST))
    record = store.record
    names = sorted(a.original_name for a in record.artifacts)
    assert names == [
        "design_1_scaled.csv",
        "design_1_scaled_scaled.csv",
        "design_1_scaled_scaled_metrics.json",
    ]
    assert sorted(_pairs(record.edges)) == [
        ("data", "data", False),
        ("data", "data", False),
        ("data", "scored", True),
        ("dataset", "metrics", False),
    ]


def test_expose_stages_internal_edges_on_the_boundary_without_shortcuts(tmp_path: Path) -> None:
    store, source = _run(tmp_path, TwiceScaled(intermediates=Intermediates.EXPOSE))
    record = store.record
    assert len(record.artifacts) == 3
    assert all(e.step_boundary for e in record.edges)
    assert len(record.edges) == 3
    assert [e.source_artifact_id for e in record.edges].count(source) == 1


def test_an_inner_failure_fails_the_unit_naming_the_operation(tmp_path: Path) -> None:
    store, _ = _run(tmp_path, Exploding())
    record = store.record
    assert not record.success
    assert "operation #1 'wt_boom' failed" in (record.error or "")
    assert "hello from echo" in (record.tool_output or "")
    assert record.artifacts == ()


def test_a_wiring_mistake_fails_the_unit_with_the_roles_there_are(tmp_path: Path) -> None:
    store, _ = _run(tmp_path, Miswired())
    record = store.record
    assert not record.success
    assert "no output role 'dataset'; its roles: data" in (record.error or "")


def test_the_policy_is_part_of_the_overrides_and_so_of_both_keys() -> None:
    assert TwiceScaled().overrides()["intermediates"] == "discard"
    assert TwiceScaled(intermediates=Intermediates.EXPOSE).overrides()["intermediates"] == "expose"
    with pytest.raises(ValidationError, match="intermediates"):
        TwiceScaled.model_validate({"intermediates": "keep"})
