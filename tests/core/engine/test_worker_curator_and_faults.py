import multiprocessing
import pathlib
import sys
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import polars as pl
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from worker_fakes import FakeStore, WtBoom, WtScale, final, group, make_unit

from stemma.core import plugins
from stemma.core.engine.worker.curator_lifecycle import input_frame
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.engine.worker.worker import run_pack, run_unit
from stemma.core.operations import (
    ArtifactResult,
    DataDraft,
    FinalizedArtifact,
    InputSpec,
    MetricDraft,
    OperationDefinition,
    OutputSpec,
    PassthroughResult,
)

SEEN: dict[str, pl.DataFrame] = {}


class WtKeepHigh(OperationDefinition):
    name = "wt_keep_high"
    inputs: ClassVar = {"items": InputSpec(artifact_type="metric")}
    outputs: ClassVar = {"items": OutputSpec(artifact_type="metric")}

    def execute_curator(
        self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
    ) -> ArtifactResult | PassthroughResult:
        frame = inputs["items"]
        SEEN["items"] = frame
        kept = frame.filter(pl.col("score") > 0.5)["artifact_id"].to_list()
        return PassthroughResult(passthrough={"items": kept})


class WtCount(OperationDefinition):
    name = "wt_count"
    inputs: ClassVar = {"items": InputSpec()}
    outputs: ClassVar = {"summary": OutputSpec(artifact_type="metric")}

    def execute_curator(
        self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
    ) -> ArtifactResult | PassthroughResult:
        ids = inputs["items"]["artifact_id"].to_list()
        print(f"counted {len(ids)}")
        summary = MetricDraft.draft({"count": len(ids)}, "summary.json", step_number=step_number)
        return ArtifactResult(artifacts={"summary": [summary]}, lineage={"summary": [ids]})


def _metric(name: str, **values: Any) -> FinalizedArtifact:
    return final(MetricDraft.draft(values, name))


def test_curator_passthrough_outputs_the_ids_and_makes_no_artifact(tmp_path: Path) -> None:
    low, high = _metric("a.json", score=0.2, label="x"), _metric("b.json", score=0.9, label="y")
    store = FakeStore(tmp_path, [low, high])

    report = run_unit(make_unit(WtKeepHigh(), tmp_path, group(items=[low, high])), store)

    record = store.record
    assert report.success, report.error
    assert record.outputs == {"items": (high.artifact_id,)}
    assert report.outputs == {"items": (high.artifact_id,)}
    assert record.artifacts == ()
    assert record.edges == ()
    assert SEEN["items"].columns == [
        "artifact_id",
        "original_name",
        "artifact_type",
        "label",
        "score",
    ]
    assert SEEN["items"]["original_name"].to_list() == ["a.json", "b.json"]


def test_curator_artifact_result_makes_a_metric_with_declared_lineage(tmp_path: Path) -> None:
    a = final(DataDraft.draft(b"x\n1\n", "a.csv"))
    b = _metric("b.json", score=1)
    store = FakeStore(tmp_path, [a, b])

    report = run_unit(make_unit(WtCount(), tmp_path, group(items=[a, b]), step_number=4), store)

    record = store.record
    assert report.success, report.error
    (summary,) = record.artifacts
    assert summary.content == b'{"count":2}'
    assert summary.origin_step == 4
    assert record.outputs == {"summary": (summary.artifact_id,)}
    assert {(e.source_artifact_id, e.target_artifact_id) for e in record.edges} == {
        (a.artifact_id, summary.artifact_id),
        (b.artifact_id, summary.artifact_id),
    }
    assert record.tool_output == "counted 2"


def test_input_frame_keeps_simple_metric_columns_only() -> None:
    rows = [
        _metric("a.json", n=1, mixed=1, nested={"k": 1}),
        _metric("b.json", n=2.5, mixed="two"),
        final(DataDraft.draft(b"x\n1\n", "c.csv")),
    ]
    frame = input_frame(rows)
    assert frame.columns == ["artifact_id", "original_name", "artifact_type", "n"]
    assert frame["n"].to_list() == [1.0, 2.5, None]
    assert input_frame([]).columns == ["artifact_id", "original_name", "artifact_type"]


def test_double_fault_folds_both_errors_into_the_report(tmp_path: Path) -> None:
    source = final(DataDraft.draft(b"x,y\n1,1\n", "design_1.csv"))
    store = FakeStore(tmp_path, [source], fail_failures=True)

    report = run_unit(make_unit(WtBoom(), tmp_path, group(data=[source])), store)

    assert not report.success
    assert report.bundle is None
    assert store.staged == []
    assert report.error is not None
    assert "RuntimeError: boom" in report.error
    assert "disk full while staging a failure" in report.error
    assert report.failure_log is not None
    text = report.failure_log.read_text()
    assert "boom" in text
    assert "disk full" in text


def test_a_success_that_cannot_be_staged_is_staged_as_a_failure(tmp_path: Path) -> None:
    source = final(DataDraft.draft(b"x,y\n1,1\n", "design_1.csv"))
    store = FakeStore(tmp_path, [source], fail_successes=True)

    report = run_unit(make_unit(WtScale(), tmp_path, group(data=[source])), store)

    assert not report.success
    assert report.bundle is not None
    assert (
        report.error == "staging the execution failed: OSError: disk full while staging a success"
    )
    assert store.record.artifacts == ()
    assert not store.record.success


def test_missing_inputs_fail_the_unit(tmp_path: Path) -> None:
    source = final(DataDraft.draft(b"x,y\n1,1\n", "design_1.csv"))
    store = FakeStore(tmp_path, [])

    report = run_unit(make_unit(WtScale(), tmp_path, group(data=[source])), store)

    assert not report.success
    assert report.bundle is not None
    assert "not in the store" in (report.error or "")


def test_without_a_pipeline_store_the_report_says_the_store_cannot_run_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if a package registered a store that is only a Store under the name "plain".
    plain = EntryPoint(name="plain", value="worker_fakes:PlainStore", group=plugins.STORES)
    original = plugins.registered
    registered = {**original(plugins.STORES), "plain": plain}

    def with_plain(group: str) -> dict[str, EntryPoint]:
        return registered if group == plugins.STORES else original(group)

    monkeypatch.setattr(plugins, "registered", with_plain)
    monkeypatch.setenv("STEMMA_STORE", "plain")
    source = final(DataDraft.draft(b"x,y\n1,1\n", "design_1.csv"))

    report = run_unit(make_unit(WtScale(), tmp_path, group(data=[source])))

    assert not report.success
    assert report.bundle is None
    assert "is a PlainStore, which cannot run steps" in (report.error or "")
    assert "unset STEMMA_STORE" in (report.error or "")


def test_run_unit_runs_in_a_spawned_process(tmp_path: Path) -> None:
    source = final(DataDraft.draft(b"x,y\n1,1\n", "design_1.csv"))
    store = FakeStore(tmp_path, [source])  # pickled: what it stages stays in the child
    unit = make_unit(WtScale(), tmp_path, group(data=[source]))

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        report = pool.submit(run_unit, unit, store).result(timeout=120)

    assert report.success, report.error
    assert report.bundle == tmp_path / "staging" / report.execution_run_id
    assert (report.artifact_count, report.edge_count) == (1, 1)


def test_run_pack_stages_its_units_as_one_bundle(tmp_path: Path) -> None:
    store, units = _two_units(tmp_path)
    reports = run_pack(units, store)
    assert store.packs == [2]
    assert [r.success for r in reports] == [True, True]
    assert len({r.bundle for r in reports}) == 1


def test_run_pack_falls_back_to_one_bundle_per_unit_when_the_pack_cannot_be_staged(
    tmp_path: Path,
) -> None:
    store, units = _two_units(tmp_path)
    store.fail_successes = True  # the pack and each success are refused; failures are staged
    reports = run_pack(units, store)
    assert store.packs == []
    assert [r.success for r in reports] == [False, False]
    assert all("staging the execution failed" in (r.error or "") for r in reports)


def _two_units(tmp_path: Path) -> tuple[FakeStore, list[ExecutionUnit]]:
    first = final(DataDraft.draft(b"x,y\n1,1\n", "design_1.csv"))
    second = final(DataDraft.draft(b"x,y\n2,2\n", "design_2.csv"))
    store = FakeStore(tmp_path, [first, second])
    units = [
        make_unit(WtScale(), tmp_path, group(data=[first])),
        make_unit(WtScale(), tmp_path, group(data=[second])),
    ]
    return store, units
