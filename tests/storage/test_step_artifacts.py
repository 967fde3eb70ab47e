"""Two steps that output the same bytes: each step's artifacts and each edge's maker, both stores.

Content addressing makes identical bytes one artifact, whose index row names only the step that
made them first. What a step output is comes from the steps' own records (each execution's
output edges, each step run's outputs), so ``artifacts(step_name=…)`` lists a step's artifacts
whoever made the bytes first, and every lineage edge names the step and execution that made it.
The same pipeline runs on the Delta store and on the SQLite store (then imported, as installing
stemma-storage on a root core built does), and both answer alike.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from stemma.core.cli.main import main
from stemma.core.examples import DataGenerator, MetricCalculator, SlowCopy
from stemma.core.exit_codes import ExitCode
from stemma.core.front.pipeline import Pipeline
from stemma.core.store.sqlite import SqliteStore
from stemma.storage import DeltaStore, artifacts, executions, lineage

from .conftest import FunctionStepFactory, commit_function_step

KINDS = ("delta", "sqlite")
KEYS_V0_ROOT = Path(__file__).parents[1] / "integration" / "fixtures" / "keys_v0" / "root"


@dataclass(frozen=True)
class Built:
    """A root the copy pipeline ran on, and the ids each of its steps offered."""

    root: Path
    generated: frozenset[str]
    copied: frozenset[str]
    metrics: frozenset[str]


def _copy_pipeline(root: Path) -> Built:
    """generate -> slow copy (the very same bytes, so the same artifacts) -> metrics."""
    pipeline = Pipeline.create("copies", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 5})
    copied = pipeline.run(
        SlowCopy, inputs={"dataset": generated.output("datasets")}, params={"seconds": 0.0}
    )
    scored = pipeline.run(MetricCalculator, inputs={"dataset": copied.output("dataset")})
    assert pipeline.finalize()["overall_success"] is True
    return Built(
        root,
        frozenset(pipeline.artifact_ids(generated.output("datasets"))),
        frozenset(pipeline.artifact_ids(copied.output("dataset"))),
        frozenset(pipeline.artifact_ids(scored.output("metrics"))),
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    found: dict[str, Built] = {}
    for kind in KINDS:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("STEMMA_STORE", kind)  # the workers inherit it
            found[kind] = _copy_pipeline(tmp_path_factory.mktemp(kind) / "root")
    sqlite_root = found["sqlite"].root
    assert not (sqlite_root / "delta").exists()
    unimported = tmp_path_factory.mktemp("unimported") / "root"
    shutil.copytree(sqlite_root, unimported)
    found["unimported"] = dataclasses.replace(found["sqlite"], root=unimported)
    DeltaStore(sqlite_root).recover()  # imports core.sqlite, as stemma-storage's first use does
    return found


def _ids(frame: pl.DataFrame) -> set[str]:
    return set(frame.get_column("artifact_id").to_list())


def _walked(root: Path, artifact_id: str, direction: str = "up") -> list[tuple[Any, ...]]:
    edges = lineage(root, artifact_id, "down" if direction == "down" else "up")
    rows = edges.select("depth", "source_artifact_id", "target_artifact_id", "step_name")
    return sorted(rows.iter_rows())


@pytest.mark.parametrize("kind", KINDS)
def test_artifacts_by_step_lists_bytes_another_step_made_first(
    built: dict[str, Built], kind: str
) -> None:
    run = built[kind]
    assert run.copied == run.generated  # the copy made nothing new: the same artifacts

    copied = artifacts(run.root, step_name="example.slow_copy")

    assert _ids(copied) == run.generated
    assert set(copied.get_column("origin_step_name").to_list()) == {"example.generate"}
    assert _ids(artifacts(run.root, step_name="example.generate")) == run.generated
    assert _ids(artifacts(run.root, step_name="example.metrics")) == run.metrics
    assert artifacts(run.root, step_name="example.slow_copy", artifact_type="metric").is_empty()
    assert artifacts(run.root, step_name="no.such.step").is_empty()


@pytest.mark.parametrize("kind", KINDS)
def test_lineage_names_the_step_and_execution_of_each_edge(
    built: dict[str, Built], kind: str
) -> None:
    run = built[kind]
    metric = sorted(run.metrics)[0]

    edges = lineage(run.root, metric, "up")

    (source,) = set(edges.get_column("source_artifact_id").to_list())
    assert _walked(run.root, metric) == [
        (1, source, metric, "example.metrics"),
        (2, source, source, "example.slow_copy"),  # made "from itself": by the copy
    ]
    made_by = executions(run.root).select("execution_run_id", "step_name", "step_run_id")
    for edge in edges.iter_rows(named=True):
        (execution,) = made_by.filter(pl.col("execution_run_id") == edge["execution_run_id"]).rows()
        assert execution[1:] == (edge["step_name"], edge["step_run_id"])
    down = _walked(run.root, source, "down")
    assert down == [
        (1, source, metric, "example.metrics"),
        (1, source, source, "example.slow_copy"),
    ]


def test_both_stores_answer_alike(built: dict[str, Built]) -> None:
    delta, sqlite = built["delta"], built["sqlite"]
    assert (delta.generated, delta.copied, delta.metrics) == (
        sqlite.generated,
        sqlite.copied,
        sqlite.metrics,
    )
    for step in ("example.generate", "example.slow_copy", "example.metrics"):
        assert _ids(artifacts(delta.root, step_name=step)) == _ids(
            artifacts(sqlite.root, step_name=step)
        )
    for metric in delta.metrics:
        assert _walked(delta.root, metric) == _walked(sqlite.root, metric)
    metrics = sorted(delta.metrics)
    assert SqliteStore(sqlite.root).ancestry(metrics) == DeltaStore(delta.root).ancestry(metrics)


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    assert main([*argv, "--format", "json"]) == ExitCode.OK
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", KINDS)
def test_cli_artifacts_by_step_and_lineage_show_who_made_each_edge(
    built: dict[str, Built], kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run = built[kind]
    root = ["--root", str(run.root)]

    copied = _cli_json(capsys, "artifacts", "--step", "example.slow_copy", *root)
    metric = sorted(run.metrics)[0]
    up = _cli_json(capsys, "lineage", metric[:12], *root)

    assert {row["artifact_id"] for row in copied} == run.generated
    assert [(e["depth"], e["step_name"]) for e in up] == [
        (1, "example.metrics"),
        (2, "example.slow_copy"),
    ]
    copies = executions(run.root, step_name="example.slow_copy")
    assert up[1]["execution_run_id"] in set(copies.get_column("execution_run_id").to_list())
    assert up[1]["source_artifact_id"] == up[1]["target_artifact_id"]


def test_cli_on_a_root_core_recorded_reads_core_sqlite_as_the_import_would(
    built: dict[str, Built], capsys: pytest.CaptureFixture[str]
) -> None:
    root, imported = built["unimported"].root, built["sqlite"].root  # the same runs
    database = root / "core.sqlite"
    written = database.stat().st_mtime_ns

    listed = _cli_json(capsys, "artifacts", "--step", "example.slow_copy", "--root", str(root))
    metric = sorted(built["unimported"].metrics)[0][:12]
    up = _cli_json(capsys, "lineage", metric, "--root", str(root))

    assert {row["artifact_id"] for row in listed} == built["unimported"].generated
    assert all(row["detail"].startswith("dataset_") for row in listed)
    after_import = _cli_json(capsys, "lineage", metric, "--root", str(imported))
    assert sorted(map(str, up)) == sorted(map(str, after_import))
    assert [(e["depth"], e["step_name"]) for e in up] == [
        (1, "example.metrics"),
        (2, "example.slow_copy"),
    ]
    assert up[0]["target_name"].endswith("_metrics.json")
    assert not (root / "delta").exists()  # read, never imported by a command that only reads
    assert database.stat().st_mtime_ns == written


def test_function_steps_returning_the_same_value_each_list_it(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    first = make_step("first", config={"n": 1}, value={"answer": 42})
    second = make_step("second", config={"n": 2}, value={"answer": 42})
    assert first.value.artifact_id == second.value.artifact_id  # one artifact, two makers
    for step in (first, second):
        commit_function_step(store, step)

    listed = artifacts(store.layout.root, step_name="second")

    assert _ids(listed) == {second.output.artifact_id, second.value.artifact_id}
    (value,) = listed.filter(pl.col("artifact_type") == "metric").iter_rows(named=True)
    assert value["origin_step_name"] == "first"


def test_a_root_written_before_these_reads_answers_them(tmp_path: Path) -> None:
    root = tmp_path / "old root"
    shutil.copytree(KEYS_V0_ROOT, root)
    before = sorted(os.listdir(root / "delta"))

    scaled = artifacts(root, step_name="fixture/scale")
    (merged,) = _ids(artifacts(root, step_name="fixture/merge", artifact_type="file_ref"))
    walked = lineage(root, merged, "up")

    assert scaled.height == 4  # two fingerprints, each an output and a value
    assert set(scaled.get_column("origin_step_name").to_list()) == {"fixture/scale"}
    made = walked.filter(pl.col("source_artifact_type") != "input_file")
    by_depth = {(row[0], row[1]) for row in made.select("depth", "step_name").iter_rows()}
    assert by_depth == {(1, "fixture/merge"), (2, "fixture/scale")}
    # The raw file fixture/words read ends the walk: by its content hash and argument, as the
    # step's params keyed it (a root this old kept no path).
    files = walked.filter(pl.col("source_artifact_type") == "input_file")
    assert files.select("depth", "step_name", "source_role", "source_name").rows() == [
        (2, "fixture/words", "source", None)
    ]
    assert walked.get_column("step_run_id").null_count() == 0
    assert sorted(os.listdir(root / "delta")) == before  # reading added no table
