"""The upstream first pipeline on backend="slurm", end to end, against the local backend."""

import importlib
import json
import os
import pathlib
import sys

import polars as pl
import pytest
from slurm_testing import CommandLog

from stemma.core.examples import DataGenerator, Fail, MetricCalculator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.live import read_state
from stemma.core.operations import OperationDefinition
from stemma.storage import executions

pytestmark = pytest.mark.slurm


def _first_pipeline(root: pathlib.Path, backend: str) -> tuple[dict[str, object], list[set[str]]]:
    pipeline = Pipeline.create("first", root=root, backend=backend, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 5})
    transformed = pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": 2.0},
        execution={"artifacts_per_unit": 1},
    )
    scored = pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    outputs = [
        set(pipeline.artifact_ids(generated.output("datasets"))),
        set(pipeline.artifact_ids(transformed.output("dataset"))),
        set(pipeline.artifact_ids(scored.output("metrics"))),
    ]
    return pipeline.finalize(), outputs


def test_slurm_first_pipeline_builds_the_same_artifacts_as_local(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    on_slurm, slurm_ids = _first_pipeline(tmp_path / "slurm", "slurm")
    on_local, local_ids = _first_pipeline(tmp_path / "local", "local")
    assert on_slurm["overall_success"] is True, on_slurm
    assert on_local["overall_success"] is True
    assert slurm_ids == local_ids
    assert [len(ids) for ids in slurm_ids] == [3, 3, 3]
    done = executions(tmp_path / "slurm").filter(pl.col("success"))
    assert set(done["backend"].to_list()) >= {"slurm"}
    on_cluster = done.filter(pl.col("backend") == "slurm")
    for log in on_cluster["worker_log"]:  # the element's stdout and stderr, under their names
        assert log is not None
        assert "_log.out <==" in log, log
    ledgers = list((tmp_path / "slurm" / "runs").glob("*/slurm_jobs.jsonl"))
    assert len(ledgers) == 1
    steps = [json.loads(line)["step_number"] for line in ledgers[0].read_text().splitlines()]
    assert steps == [0, 1, 2]  # one array per step: every wave fits in one


def test_slurm_thousand_units_go_out_as_one_array_of_ten_elements(
    slurm_cluster: None, tmp_path: pathlib.Path, command_log: CommandLog
) -> None:
    pipeline = Pipeline.create("wide", root=tmp_path / "store", backend="slurm")
    generated = pipeline.run(DataGenerator, params={"count": 1000, "rows": 2})
    transformed = pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        execution={"artifacts_per_unit": 1, "units_per_worker": 100},
    )
    summary = pipeline.finalize()
    assert summary["overall_success"] is True, summary
    assert len(pipeline.artifact_ids(transformed.output("dataset"))) == 1000
    scripts = [pathlib.Path(call[-1]).read_text() for call in command_log.calls("sbatch")]
    assert len(scripts) == 2  # the generator's one element, then the transform's array
    assert "#SBATCH --array=0-9%10" in scripts[1]
    jobs = read_state(tmp_path / "store", pipeline.run_id).steps[1].jobs
    assert sum(jobs.values()) == 10  # the live state counted the array's elements by state


def test_slurm_failing_unit_leaves_its_traceback_in_the_failure_log(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    root = tmp_path / "store"
    pipeline = Pipeline.create("partial", root=root, backend="slurm")
    generated = pipeline.run(DataGenerator, params={"count": 2})
    failing = pipeline.run(
        Fail, inputs={"dataset": generated.output("datasets")}, params={"match": "dataset_1"}
    )
    pipeline.finalize()
    assert (failing.success, failing.succeeded_count, failing.failed_count) == (False, 1, 1)
    [log] = list((root / "logs" / "failures").rglob("*.log"))
    text = log.read_text()
    assert "refusing dataset_1.csv" in text
    assert "Traceback" in text
    worker_log = text.split("--- worker log (the scheduler's stdout and stderr) ---\n")[1]
    assert "_log.out <==" in worker_log  # the element's own log, appended once it ended
    failed = executions(root, success=False)
    assert failed.height == 1
    assert failed["worker_log"][0] == worker_log.rstrip()


def test_slurm_curators_run_beside_the_orchestrator_not_as_jobs(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "integration"))
    # (by name, as the integration tests import it: workers find it the same way)
    where_curated: type[OperationDefinition] = importlib.import_module("curator_probe").WhereCurated

    report = tmp_path / "report"
    report.mkdir()
    root = tmp_path / "store"
    pipeline = Pipeline.create("curated", root=root, backend="slurm", max_workers=2)
    datasets = pipeline.run(DataGenerator, params={"count": 2}).output("datasets")
    curated = pipeline.run(
        where_curated, inputs={"dataset": datasets}, params={"report": str(report)}
    )
    pipeline.run(Transform, inputs={"dataset": curated.output("dataset")})
    assert pipeline.finalize()["overall_success"] is True
    where = json.loads((report / "1.json").read_text())
    assert where["slurm_job"] is None  # not a job: no queue to wait in
    assert where["ppid"] == os.getpid()  # a subprocess of the orchestrator, on its host
    ledgers = list((root / "runs").glob("*/slurm_jobs.jsonl"))
    steps = [json.loads(line)["step_number"] for line in ledgers[0].read_text().splitlines()]
    assert steps == [0, 2]  # the creators went to the cluster, the curator did not
    curated_rows = executions(root).filter(pl.col("step_name") == "test.where_curated")
    assert curated_rows["backend"].to_list() == ["local"]
