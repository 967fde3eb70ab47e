"""The lazy front door end to end on the real Delta store (stemma-storage installed)."""

import json
import os
import pathlib
import subprocess
import sys
from collections import Counter
from typing import Any

import polars as pl
import pytest

from stemma.core import (
    OUT,
    ArtifactStep,
    StepFailedError,
    StepSpec,
    apply,
    open_store,
    plan,
    resolve,
    run,
)
from stemma.storage import DeltaStore, artifacts, executions, lineage, steps
from tests.roots_under_test import Root, new_root, on_this_machine

CALLS_ENV = "STEMMA_TEST_CALLS"
"""Where the steps' functions note each call: they run in worker processes."""

RACE_WORKER = pathlib.Path(__file__).parent.parent / "core" / "race_worker.py"


@pytest.fixture
def root(tmp_path: pathlib.Path) -> Root:
    return new_root(tmp_path)


@pytest.fixture(autouse=True)
def _calls_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


def _count(name: str) -> None:
    with (pathlib.Path(os.environ[CALLS_ENV]) / name).open("a") as stream:
        stream.write(f"{os.getpid()}\n")


def calls() -> Counter[str]:
    """How many times each function ran, in any process, in this test."""
    folder = pathlib.Path(os.environ[CALLS_ENV])
    return Counter({f.name: len(f.read_text().splitlines()) for f in folder.iterdir()})


def write_json(data: Any, out_path: str) -> dict[str, int]:
    _count("write_json")
    pathlib.Path(out_path).write_text(json.dumps(data))
    return {"keys": len(data)}


def load_data(src: str, out_path: str) -> str:
    _count("load_data")
    pathlib.Path(out_path).write_text(src)
    return src


def train(data: str, out_path: str) -> float:
    _count("train")
    pathlib.Path(out_path).mkdir()
    (pathlib.Path(out_path) / "model.txt").write_text(pathlib.Path(data).read_text().upper())
    return 0.5


def test_default_store_is_delta_when_storage_is_installed(root: Root) -> None:
    assert isinstance(open_store(root), DeltaStore)


def test_seed_example_resolves_and_records_into_delta(root: Root) -> None:
    json_step = apply(
        name="example/json", fn=write_json, version="v0", data={"hello": "world"}, out_path=OUT
    )
    spec = json_step.lower()
    artifact = resolve(json_step, root=root)
    assert artifact.fingerprint == spec.fingerprint
    assert artifact.path() == on_this_machine(root) / spec.output_relpath
    assert json.loads(artifact.path().read_text()) == {"hello": "world"}
    assert artifact.value == {"keys": 1}

    events = steps(root).sort("timestamp")
    assert events["status"].to_list() == ["running", "completed"]
    assert set(events["step_spec_id"].to_list()) == {spec.fingerprint}
    (execution,) = executions(root).iter_rows(named=True)
    assert execution["success"] is True
    assert execution["step_spec_id"] == spec.fingerprint
    provenance = json.loads(execution["provenance"])
    assert {"git_commit", "user", "host", "created_at", "command_line"} <= provenance.keys()
    kinds = artifacts(root).select("artifact_id", "artifact_type")
    assert (artifact.artifact_id, "file_ref") in kinds.rows()
    assert kinds.filter(pl.col("artifact_type") == "metric").height == 1


def test_seed_memo_example_runs_the_shared_dataset_once(root: Root) -> None:
    dataset = apply(
        name="dataset", fn=load_data, version="v1", src="gs://bucket/data", out_path=OUT
    )
    model_a = apply(name="model_a", fn=train, version="v0", data=dataset, out_path=OUT)
    model_b = apply(name="model_b", fn=train, version="v0", data=dataset, out_path=OUT)
    memo: dict[ArtifactStep, StepSpec] = {}
    spec_a = model_a.lower(memo=memo)
    spec_b = model_b.lower(memo=memo)
    assert spec_a.deps[0] is spec_b.deps[0]
    built_a, built_b = run(model_a, model_b, root=root)
    assert calls() == {"load_data": 1, "train": 2}
    assert (built_a.path() / "model.txt").read_text() == "GS://BUCKET/DATA"
    assert built_b.value == 0.5
    # Lineage: the model's output was made from the dataset's output, one hop up.
    dataset_output = resolve(dataset, root=root).artifact_id
    up = lineage(root, built_a.artifact_id, direction="up")
    assert up.select("source_artifact_id", "source_role", "depth").rows() == [
        (dataset_output, "data", 1)
    ]
    down = lineage(root, dataset_output, direction="down")
    assert {built_a.artifact_id, built_b.artifact_id} <= set(down["target_artifact_id"].to_list())


def test_second_run_executes_nothing_and_writes_no_execution_row(root: Root) -> None:
    dataset = apply(name="dataset", fn=load_data, version="v1", src="x", out_path=OUT)
    model = apply(name="model", fn=train, version="v0", data=dataset, out_path=OUT)
    run(model, root=root)
    before = executions(root).height
    again = run(model, root=root)
    assert calls() == {"load_data": 1, "train": 1}
    assert again[0].cached
    assert executions(root).height == before == 2


def test_plan_on_delta_writes_nothing(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "untouched"
    step = apply(name="dataset", fn=load_data, version="v1", src="x", out_path=OUT)
    (entry,) = plan(step, root=root)
    assert entry.action == "run"
    assert not root.exists()


def test_ten_runner_processes_on_delta_execute_once(tmp_path: pathlib.Path, root: Root) -> None:
    counter = tmp_path / "executions.txt"
    start = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                str(RACE_WORKER),
                str(root),
                "delta",
                str(counter),
                str(start),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(10)
    ]
    start.touch()
    values: list[object] = []
    for process in processes:
        out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err
        values.append(json.loads(out.strip().splitlines()[-1])["value"])
    assert values == [42] * 10
    assert len(counter.read_text().splitlines()) == 1
    assert executions(root).height == 1


def explode(data: str, out_path: str) -> None:
    raise ValueError("corrupt input")


def test_failed_step_and_skipped_dependents_are_in_the_steps_log(root: Root) -> None:
    dataset = apply(name="dataset", fn=load_data, version="v1", src="x", out_path=OUT)
    broken = apply(name="broken", fn=explode, version="v0", data=dataset, out_path=OUT)
    after = apply(name="after", fn=train, version="v0", data=broken, out_path=OUT)
    with pytest.raises(StepFailedError):
        run(after, root=root)
    log = steps(root).sort("timestamp")
    by_name = {
        name: group["status"].to_list()
        for (name,), group in log.group_by("step_name", maintain_order=True)
    }
    assert by_name == {
        "dataset": ["running", "completed"],
        "broken": ["running", "failed"],
        "after": ["skipped"],
    }
    (skipped,) = log.filter(pl.col("status") == "skipped").iter_rows(named=True)
    assert "'broken' failed" in skipped["error"]
    assert json.loads(skipped["metadata"])["skip_reason"] == "dependency_failed"
    (failed,) = executions(root).filter(~pl.col("success")).iter_rows(named=True)
    assert "corrupt input" in failed["error"]


def test_a_steps_type_is_recorded_and_shown_by_lineage_and_artifacts(
    root: Root, capsys: pytest.CaptureFixture[str]
) -> None:
    from stemma.core.cli.main import main

    dataset = apply(name="dataset", fn=load_data, version="v1", type="text", src="x", out_path=OUT)
    model = apply(
        name="model",
        fn=train,
        version="v0",
        type="model",
        build_config=lambda ctx: {"data": ctx.dep(dataset), "out_path": ctx.output_path},
    )
    (built,) = run(model, root=root)
    up = lineage(root, built.artifact_id)
    assert up.select("source_name", "source_type", "target_name", "target_type").rows() == [
        ("dataset", "text", "model", "model")
    ]
    index = artifacts(root).filter(pl.col("artifact_id") == built.artifact_id)
    assert index.get_column("type").to_list() == ["model"]
    assert json.loads(index.get_column("metadata").item()) == {"type": "model"}
    value = artifacts(root, step_name="model", artifact_type="metric")
    assert value.get_column("type").to_list() == [None]  # the return value has no type
    assert main(["lineage", built.artifact_id[:12], "--root", str(root)]) == 0
    table = capsys.readouterr().out
    assert "dataset (text)" in table
    assert "model (model)" in table
    assert main(["lineage", built.artifact_id, "--root", str(root), "--format", "json"]) == 0
    [edge] = json.loads(capsys.readouterr().out)
    assert (edge["source_type"], edge["target_type"]) == ("text", "model")
