import json
import os
import pathlib
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from worker_fakes import FakeStore, WtBoom, WtScale, csv_bytes, final, group, make_unit, sandbox_of

from stemma.core.engine.worker.worker import run_unit
from stemma.core.operations import (
    ArtifactResult,
    ConfigDraft,
    DataDraft,
    ExecuteInput,
    InputSpec,
    MetricDraft,
    OperationDefinition,
    OutputSpec,
    PostprocessInput,
    PreprocessInput,
)
from stemma.core.operations.pairing import GroupBy
from stemma.core.store.failure_logs import failure_log_path


class WtConfigured(OperationDefinition):
    name = "wt_configured"
    inputs: ClassVar = {
        "data": InputSpec(artifact_type="data"),
        "config": InputSpec(artifact_type="config"),
    }
    outputs: ClassVar = {
        "report": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": ["data"]})
    }
    group_by = GroupBy.ZIP

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        (config_path,) = inp.materialized_paths["config"]
        config = json.loads(config_path.read_text())
        return {
            "config": config,
            "exists": {k: Path(v).is_file() for k, v in config.items() if k != "scale"},
            "data_path": str(inp.materialized_paths["data"][0]),
        }

    def execute(self, inp: ExecuteInput) -> Any:
        return dict(inp.prepared)

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        report = MetricDraft.draft(inp.execute_result, "design_1_report.json")
        return ArtifactResult(artifacts={"report": [report]})


class WtPaired(OperationDefinition):
    name = "wt_paired"
    inputs: ClassVar = {
        "structure": InputSpec(artifact_type="data"),
        "score": InputSpec(artifact_type="metric"),
    }
    outputs: ClassVar = {
        "annotated": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["structure"]})
    }
    group_by = GroupBy.ZIP

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {"paths": inp.materialized_paths["structure"]}

    def execute(self, inp: ExecuteInput) -> Any:
        for path in inp.prepared["paths"]:
            (inp.execute_dir / f"{path.stem}_annotated.csv").write_bytes(path.read_bytes())

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        drafts = [DataDraft.draft(p.read_bytes(), p.name) for p in inp.files]
        return ArtifactResult(artifacts={"annotated": drafts})


def test_creator_transforms_a_csv_with_a_stem_lineage_edge(tmp_path: Path) -> None:
    source = final(DataDraft.draft(csv_bytes([(1, 2), (3, 4)]), "design_1.csv"))
    store = FakeStore(tmp_path, [source])

    report = run_unit(make_unit(WtScale(), tmp_path, group(data=[source])), store)

    record = store.record
    assert report.success
    assert record.success
    assert report.bundle == tmp_path / "staging" / record.execution_run_id
    (out,) = record.artifacts
    assert out.original_name == "design_1_scaled.csv"
    assert out.content == csv_bytes([(1, 4), (3, 8)])
    assert record.outputs == {"data": (out.artifact_id,)}
    assert [(e.source_artifact_id, e.target_artifact_id, e.group_id) for e in record.edges] == [
        (source.artifact_id, out.artifact_id, None)
    ]
    assert record.inputs == {"data": (source.artifact_id,)}
    assert record.metadata == {"count": 1}
    assert (report.artifact_count, report.output_count, report.edge_count) == (1, 1, 1)
    assert record.worker.endswith(f":{os.getpid()}")
    assert record.started_at <= record.ended_at
    assert not sandbox_of(tmp_path, 1, "wt_scale", record.execution_run_id).exists()


def test_design_1_and_design_10_each_find_their_own_input(tmp_path: Path) -> None:
    one = final(DataDraft.draft(csv_bytes([(1, 1)]), "design_1.csv"))
    ten = final(DataDraft.draft(csv_bytes([(10, 10)]), "design_10.csv"))
    store = FakeStore(tmp_path, [one, ten])

    run_unit(make_unit(WtScale(), tmp_path, group(data=[one, ten])), store)

    names = {a.artifact_id: a.original_name for a in store.record.artifacts}
    sources = {names[e.target_artifact_id]: e.source_artifact_id for e in store.record.edges}
    assert sources == {
        "design_1_scaled.csv": one.artifact_id,
        "design_10_scaled.csv": ten.artifact_id,
    }


def test_ambiguous_lineage_fails_with_a_record_and_a_failure_log(tmp_path: Path) -> None:
    first = final(DataDraft.draft(csv_bytes([(1, 1)]), "sample.csv"))
    second = final(DataDraft.draft(csv_bytes([(2, 2)]), "sample.tsv"))
    store = FakeStore(tmp_path, [first, second])

    report = run_unit(make_unit(WtScale(), tmp_path, group(data=[first, second])), store)

    record = store.record
    assert not report.success
    assert not record.success
    assert report.bundle is not None
    assert "LineageError" in (report.error or "")
    assert "ambiguous" in (report.error or "")
    assert record.artifacts == ()
    assert record.edges == ()
    assert record.outputs == {}
    log = failure_log_path(tmp_path, 1, "wt_scale", record.execution_run_id)
    assert report.failure_log == log
    text = log.read_text()
    assert record.execution_run_id in text
    assert "wt_scale" in text
    assert "local" in text
    assert "ambiguous" in text
    assert "Traceback" in text


def test_execute_raising_keeps_the_traceback_and_all_printed_output(tmp_path: Path) -> None:
    source = final(DataDraft.draft(csv_bytes([(1, 1)]), "design_1.csv"))
    store = FakeStore(tmp_path, [source])

    report = run_unit(make_unit(WtBoom(), tmp_path, group(data=[source])), store)

    record = store.record
    assert not report.success
    assert report.error == "RuntimeError: boom"
    assert record.error is not None
    assert "Traceback" in record.error
    assert "boom" in record.error
    assert record.tool_output is not None
    assert "hello from python" in record.tool_output
    assert "hello from echo" in record.tool_output
    assert report.failure_log is not None
    assert "hello from echo" in report.failure_log.read_text()


def test_config_is_materialized_last_with_references_replaced_by_paths(tmp_path: Path) -> None:
    data = final(DataDraft.draft(csv_bytes([(1, 1)]), "design_1.csv"))
    extra = final(DataDraft.draft(csv_bytes([(9, 9)]), "lookup.csv"))  # in the store, not an input
    config = final(
        ConfigDraft.draft(
            {"table": {"$artifact": data.artifact_id}, "lookup": {"$artifact": extra.artifact_id}},
            "settings.json",
        )
    )
    store = FakeStore(tmp_path, [data, extra, config])

    report = run_unit(
        make_unit(WtConfigured(), tmp_path, group(data=[data], config=[config])), store
    )

    assert report.success, report.error
    (metric,) = store.record.artifacts
    assert metric.content is not None
    seen = json.loads(metric.content)
    assert seen["exists"] == {"table": True, "lookup": True}
    assert seen["config"]["table"] == seen["data_path"]
    assert seen["data_path"].endswith("materialized_inputs/data/design_1.csv")
    assert seen["config"]["lookup"].endswith("materialized_inputs/_referenced/lookup.csv")
    (edge,) = store.record.edges
    assert (edge.source_artifact_id, edge.source_role) == (data.artifact_id, "data")


def test_preserve_working_keeps_the_sandbox(tmp_path: Path) -> None:
    source = final(DataDraft.draft(csv_bytes([(1, 2)]), "design_1.csv"))
    store = FakeStore(tmp_path, [source])

    unit = make_unit(WtScale(), tmp_path, group(data=[source]), preserve_working=True)
    report = run_unit(unit, store)

    sandbox = sandbox_of(tmp_path, 1, "wt_scale", report.execution_run_id)
    assert (sandbox / "materialized_inputs" / "data" / "design_1.csv").read_bytes() == (
        source.content
    )
    assert (sandbox / "execute" / "design_1_scaled.csv").is_file()
    assert (sandbox / "preprocess").is_dir()
    assert (sandbox / "postprocess").is_dir()
    assert (sandbox / "tool_output.log").is_file()


def test_paired_groups_give_co_input_edges_sharing_the_group_id(tmp_path: Path) -> None:
    s1 = final(DataDraft.draft(csv_bytes([(1, 1)]), "design_1.csv"))
    s2 = final(DataDraft.draft(csv_bytes([(2, 2)]), "design_2.csv"))
    m1 = final(MetricDraft.draft({"score": 0.1}, "design_1_score.json"))
    m2 = final(MetricDraft.draft({"score": 0.2}, "design_2_score.json"))
    store = FakeStore(tmp_path, [s1, s2, m1, m2])
    groups = (
        group("g1" * 16, structure=[s1], score=[m1]),
        group("g2" * 16, structure=[s2], score=[m2]),
    )

    report = run_unit(make_unit(WtPaired(), tmp_path, *groups), store)

    assert report.success, report.error
    names = {a.artifact_id: a.original_name for a in store.record.artifacts}
    edges = {
        (names[e.target_artifact_id], e.source_role, e.source_artifact_id, e.group_id)
        for e in store.record.edges
    }
    assert edges == {
        ("design_1_annotated.csv", "structure", s1.artifact_id, "g1" * 16),
        ("design_1_annotated.csv", "score", m1.artifact_id, "g1" * 16),
        ("design_2_annotated.csv", "structure", s2.artifact_id, "g2" * 16),
        ("design_2_annotated.csv", "score", m2.artifact_id, "g2" * 16),
    }
    types = {(e.source_role, e.source_artifact_type) for e in store.record.edges}
    assert types == {("structure", "data"), ("score", "metric")}


class WtChatty(WtScale):
    """WtScale, saying what it does from Python and from a subprocess, without a newline last."""

    name = "wt_chatty"

    def execute(self, inp: ExecuteInput) -> Any:
        print("scaling from python")
        sys.stdout.flush()  # (its own buffer: before the subprocess writes to the same file)
        subprocess.run(["echo", "scaling from echo"], check=True)
        print("done, no newline", end="")
        return super().execute(inp)


def test_a_succeeding_units_printed_lines_are_its_tool_output_and_a_quiet_one_has_none(
    tmp_path: Path,
) -> None:
    source = final(DataDraft.draft(csv_bytes([(1, 2)]), "design_1.csv"))
    chatty, quiet = FakeStore(tmp_path / "a", [source]), FakeStore(tmp_path / "b", [source])

    assert run_unit(make_unit(WtChatty(), tmp_path / "a", group(data=[source])), chatty).success
    assert run_unit(make_unit(WtScale(), tmp_path / "b", group(data=[source])), quiet).success

    assert chatty.record.tool_output == "scaling from python\nscaling from echo\ndone, no newline"
    assert quiet.record.tool_output is None


class WtClosesStdout(WtScale):
    """WtScale, which prints a line and then closes ``sys.stdout`` (some tools do)."""

    name = "wt_closes_stdout"

    def execute(self, inp: ExecuteInput) -> Any:
        print("before the close")
        sys.stdout.close()
        return super().execute(inp)


def test_a_unit_that_closes_stdout_still_succeeds_and_the_worker_prints_again(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    source = final(DataDraft.draft(csv_bytes([(1, 2)]), "design_1.csv"))
    store = FakeStore(tmp_path, [source])

    report = run_unit(make_unit(WtClosesStdout(), tmp_path, group(data=[source])), store)

    assert report.success, report.error
    assert store.record.tool_output == "before the close"
    print("the worker's own line")  # its streams and descriptors are its own again
    assert "the worker's own line" in capfd.readouterr().out
