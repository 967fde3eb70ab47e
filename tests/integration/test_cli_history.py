"""The `stemma` command over a real Delta store filled by a real pipeline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from stemma.core.cli.main import main
from stemma.core.examples import DataGenerator, MetricCalculator, Transform
from stemma.core.exit_codes import ExitCode
from stemma.core.front.pipeline import Pipeline
from tests.roots_under_test import Root, new_root


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Root:
    root = new_root(tmp_path_factory.mktemp("cli"), "store")
    pipeline = Pipeline.create("first", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    transformed = pipeline.run(Transform, inputs={"dataset": generated.output("datasets")})
    pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    pipeline.finalize()
    return root


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main([*argv, "--format", "json"]) == ExitCode.OK
    return json.loads(capsys.readouterr().out)


def test_runs_from_history_alone_when_the_live_state_is_gone(
    root: Root, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if isinstance(root, Path):  # the root copied without its live state
        copy: Root = tmp_path / "copy"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("runs"))
    else:  # the bucket read from a machine whose local half is new
        copy = root
        monkeypatch.setenv("STEMMA_STATE_DIR", str(tmp_path / "another machine"))
    [run] = _json(capsys, "runs", "--root", str(copy))
    assert (run["status"], run["steps"]) == ("completed", "3/3")
    assert main(["status", run["run_id"], "--root", str(copy)]) == ExitCode.OK
    assert "from history" in capsys.readouterr().out


def test_artifacts_lists_each_type_and_filters_by_type(
    root: Root, capsys: pytest.CaptureFixture[str]
) -> None:
    metrics = _json(capsys, "artifacts", "--root", str(root), "--type", "metric")
    assert len(metrics) == 2
    assert {row["origin_step_name"] for row in metrics} == {"example.metrics"}
    assert metrics[0]["detail"].startswith("{")


def test_lineage_walks_up_from_a_metric_and_down_from_its_source(
    root: Root, capsys: pytest.CaptureFixture[str]
) -> None:
    metric = _json(capsys, "artifacts", "--root", str(root), "--type", "metric")[0]["artifact_id"]
    up = _json(capsys, "lineage", metric[:10], "--root", str(root))
    assert [(e["depth"], e["source_artifact_type"]) for e in up] == [(1, "data"), (2, "data")]
    raw = up[-1]["source_artifact_id"]
    down = _json(capsys, "lineage", raw, "--down", "--root", str(root))
    assert metric in {edge["target_artifact_id"] for edge in down}


def test_lineage_of_an_unknown_artifact_exits_not_found(
    root: Root, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lineage", "ffffffff", "--root", str(root)]) == ExitCode.NOT_FOUND
    assert "stemma artifacts" in capsys.readouterr().err


def test_explain_says_which_param_made_a_pipeline_step_run_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = new_root(tmp_path, "store")
    for scale in (1.5, 2.5):
        pipeline = Pipeline.create("scaled", root=root, max_workers=1)
        generated = pipeline.run(DataGenerator, params={"count": 1, "rows": 2})
        pipeline.run(
            Transform, inputs={"dataset": generated.output("datasets")}, params={"scale": scale}
        )
        pipeline.finalize()
    capsys.readouterr()
    assert main(["explain", "example.transform", "--root", str(root)]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "ran: key changed since scaled_" in out
    assert "scale: 1.5 → 2.5" in out
    assert main(["explain", "example.generate", "--root", str(root)]) == ExitCode.OK
    assert "hit: same key" in capsys.readouterr().out


def test_explain_and_status_take_a_run_by_its_short_id(
    root: Root, capsys: pytest.CaptureFixture[str]
) -> None:
    [run] = _json(capsys, "runs", "--root", str(root))
    short = run["run_id"].rsplit("_", 1)[-1]  # as the dashboard shows it
    assert main(["status", short, "--root", str(root)]) == ExitCode.OK
    assert f"run {run['run_id']}" in capsys.readouterr().out
    assert main(["explain", "example.metrics", "--run", short, "--root", str(root)]) == 0
    assert f"step example.metrics in {run['run_id']}" in capsys.readouterr().out
