"""The Pipeline end to end on the real Delta store and the local process backend."""

import itertools
import pathlib
import sys
import time
from dataclasses import dataclass
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
import polars as pl
import pytest
from fault_operations import SlowFailOn

from stemma.core.engine.references import OutputReference, StepResult
from stemma.core.errors import StepFailedError
from stemma.core.examples import DataGenerator, Fail, MetricCalculator, SlowCopy, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.storage import artifacts, executions, steps
from tests.roots_under_test import Root, below, new_root, on_this_machine


@pytest.fixture
def root(tmp_path: pathlib.Path) -> Root:
    return new_root(tmp_path, "store")


@dataclass(frozen=True)
class FirstRun:
    generated: StepResult
    transformed: StepResult
    scored: StepResult
    summary: dict[str, Any]
    pipeline: Pipeline


def _first_pipeline(root: Root, *, scale: float = 2.0, per_unit: int = 1) -> FirstRun:
    pipeline = Pipeline.create("first", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 5})
    transformed = pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": scale},
        execution={"artifacts_per_unit": per_unit},
    )
    scored = pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    return FirstRun(generated, transformed, scored, pipeline.finalize(), pipeline)


def _outputs(pipeline: Pipeline, step_number: int, role: str) -> set[str]:
    return set(pipeline.artifact_ids(pipeline[step_number].output(role)))


def test_pipeline_first_run_builds_every_step(root: Root) -> None:
    run = _first_pipeline(root)
    assert run.summary["overall_success"] is True
    assert [s["succeeded"] for s in run.summary["steps"]] == [1, 3, 3]
    pipeline = run.pipeline
    assert len(_outputs(pipeline, 1, "dataset")) == 3
    assert len(_outputs(pipeline, 2, "metrics")) == 3
    kinds = artifacts(root)["artifact_type"].value_counts().sort("artifact_type").rows()
    assert kinds == [("data", 6), ("metric", 3)]
    assert executions(root).filter(pl.col("success")).height == 7


def test_an_operation_steps_run_provenance_is_recorded_once_on_its_running_event(
    root: Root,
) -> None:
    import json

    pipeline = Pipeline.create("provenance", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3})
    pipeline.finalize()
    running = steps(root).filter(pl.col("status") == "running")
    [event] = running.filter(pl.col("step_run_id") == generated.step_run_id).to_dicts()
    provenance = json.loads(event["metadata"])["provenance"]
    assert {"git_commit", "user", "host", "created_at", "command_line"} <= provenance.keys()
    rows = executions(root).filter(pl.col("step_run_id") == generated.step_run_id)
    assert rows.height == 1
    assert rows.get_column("provenance").to_list() == [None]  # not repeated on each unit


def test_pipeline_identical_rerun_is_all_step_hits_with_no_new_execution_rows(
    root: Root,
) -> None:
    first = _first_pipeline(root)
    before = executions(root).height
    second = _first_pipeline(root)
    assert executions(root).height == before
    for result in (second.generated, second.transformed, second.scored):
        assert result.metadata["cache"] == "step"
    assert _outputs(first.pipeline, 2, "metrics") == _outputs(second.pipeline, 2, "metrics")


def test_pipeline_changed_param_reruns_that_step_and_below_only(root: Root) -> None:
    _first_pipeline(root, scale=2.0)
    second = _first_pipeline(root, scale=3.0)
    caches = [r.metadata["cache"] for r in (second.generated, second.transformed, second.scored)]
    assert caches == ["step", None, None]


def test_pipeline_changed_batching_only_reruns_nothing(root: Root) -> None:
    _first_pipeline(root, per_unit=1)
    before = executions(root).height
    second = _first_pipeline(root, per_unit=3)
    assert second.transformed.metadata["cache"] == "step"
    assert executions(root).height == before


def test_pipeline_same_units_at_a_new_position_are_execution_level_hits(root: Root) -> None:
    pipeline = _first_pipeline(root).pipeline
    generated_ids = sorted(_outputs(pipeline, 0, "datasets"))
    before = executions(root).height
    again = Pipeline.create("again", root=root, max_workers=2)
    literal = again.run(Transform, inputs={"dataset": generated_ids}, params={"scale": 2.0})
    scored = again.run(MetricCalculator, inputs={"dataset": literal.output("dataset")})
    again.finalize()
    assert literal.metadata["cache"] is None  # a new step key: literal inputs, not a reference
    assert literal.succeeded_count == 3
    # Every unit of both steps was an execution-level hit, and the hits' outputs flowed on.
    assert executions(root).height == before
    assert scored.succeeded_count == 3
    assert _outputs(again, 0, "dataset") == _outputs(pipeline, 1, "dataset")


def test_pipeline_partial_failure_under_continue_passes_successes_downstream(
    root: Root,
) -> None:
    pipeline = Pipeline.create("partial", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3})
    failing = pipeline.run(
        Fail, inputs={"dataset": generated.output("datasets")}, params={"match": "dataset_1"}
    )
    scored = pipeline.run(MetricCalculator, inputs={"dataset": failing.output("dataset")})
    pipeline.finalize()
    assert (failing.success, failing.succeeded_count, failing.failed_count) == (False, 2, 1)
    assert scored.succeeded_count == 2
    logs = list((on_this_machine(root) / "logs" / "failures").rglob("*.log"))
    assert len(logs) == 1
    assert "refusing dataset_1.csv" in logs[0].read_text()


def test_pipeline_all_failed_step_skips_dependents_not_independent_branches(
    root: Root,
) -> None:
    pipeline = Pipeline.create("allfail", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 2})
    failing = pipeline.submit(Fail, inputs={"dataset": generated.output("datasets")})
    after = pipeline.submit(MetricCalculator, inputs={"dataset": failing.output("dataset")})
    independent = pipeline.submit(Transform, inputs={"dataset": generated.output("datasets")})
    summary = pipeline.finalize()
    assert failing.result().metadata["status"] == "failed"
    assert after.result().metadata["status"] == "skipped"
    assert after.result().metadata["skip_reason"] == "dependency_failed"
    # One rule (engine.step_events.succeeded): a step skipped because a step it reads from
    # did not build did not do what it was asked, in its result and in finalize()'s summary.
    assert not after.result().success
    rows = {row["name"]: row for row in summary["steps"]}
    assert rows[after.result().step_name]["success"] is False
    assert independent.result().success


def test_a_step_with_nothing_to_do_is_skipped_and_counts_as_a_success(
    root: Root,
) -> None:
    from stemma.core.operations.builtins import Filter

    pipeline = Pipeline.create("nothing", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 2})
    pipeline.run(MetricCalculator, inputs={"dataset": generated.output("datasets")})
    kept = pipeline.run(  # no mean is that large: the filter keeps nothing, and that is fine
        Filter,
        inputs={"dataset": generated.output("datasets")},
        params={"criteria": [{"metric": "mean_y", "operator": "gt", "value": 1e12}]},
    )
    after = pipeline.run(Transform, inputs={"dataset": kept.output("dataset")})
    summary = pipeline.finalize()
    assert kept.success
    assert (after.metadata["status"], after.metadata["skip_reason"]) == ("skipped", "empty_inputs")
    assert after.success
    assert summary["overall_success"] is True


def test_an_operation_class_workers_cannot_import_is_refused_before_anything_runs(
    root: Root,
) -> None:
    from stemma.core import apply, output_of, run
    from stemma.core.errors import UnpicklableStepError
    from stemma.core.examples import CopyUnlessRefused

    class CopyDefinedInATest(CopyUnlessRefused):  # local: a worker cannot import it by name
        name = "test.copy_defined_in_a_test"

    pipeline = Pipeline.create("local_class", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 1})
    with pytest.raises(UnpicklableStepError, match="CopyDefinedInATest cannot be sent") as err:
        pipeline.submit(CopyDefinedInATest, inputs={"dataset": generated.output("datasets")})
    assert "top level of an importable module" in str(err.value)
    assert "backend='local-thread'" in str(err.value)
    pipeline.finalize()
    assert len(steps(root).filter(pl.col("step_name") == "test.copy_defined_in_a_test")) == 0
    data = apply("data", DataGenerator, params={"count": 1})
    copied = apply("copied", CopyDefinedInATest, dataset=output_of(data, "datasets"))
    with pytest.raises(UnpicklableStepError, match="CopyDefinedInATest"):
        run(copied, root=below(root, "lazy"))
    assert not (
        on_this_machine(below(root, "lazy")) / "runs"
    ).exists()  # refused before a run opened


def _names_in_unit_order(pipeline: Pipeline, reference: OutputReference) -> list[str]:
    """The original names of a step's outputs, in the order its one-input units are cut."""
    ids = sorted(pipeline.artifact_ids(reference))
    loaded = pipeline.store.load_artifacts(ids)
    return [loaded[i].original_name for i in ids]


def test_pipeline_fail_fast_stops_the_packed_units_skips_later_steps_and_raises(
    root: Root,
) -> None:
    pipeline = Pipeline.create("fast", root=root, max_workers=2, failure_policy="fail_fast")
    datasets = pipeline.run(DataGenerator, params={"count": 8}).output("datasets")
    position = _names_in_unit_order(pipeline, datasets).index("dataset_2.csv")
    failing = pipeline.submit(
        Fail,
        inputs={"dataset": datasets},
        params={"match": "dataset_2"},
        execution={"units_per_worker": 8},  # one pack of all eight quick units
    )
    after = pipeline.submit(Transform, inputs={"dataset": failing.output("dataset")})
    result = failing.result()
    # The units before the failure ran; every unit after it in the pack never started.
    assert (result.succeeded_count, result.failed_count, result.cancelled_count) == (
        position,
        1,
        7 - position,
    )
    assert result.total_count == 8
    ran = executions(root).filter(pl.col("step_name") == "example.fail")
    assert (ran["success"].sum(), (~ran["success"]).sum()) == (position, 1)
    with pytest.raises(StepFailedError) as info:
        pipeline.output("example.fail", "dataset")
    assert info.value.failed == ["example.fail"]
    assert f"1 unit(s) failed, {7 - position} never started" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)  # the unit's own, from its worker
    assert "refusing dataset_2" in str(info.value.__cause__)
    assert after.result().metadata["skip_reason"] == "fail_fast"  # not run on the outputs
    with pytest.raises(StepFailedError, match="failed under fail_fast"):
        pipeline.run(Transform, inputs={"dataset": datasets})  # no later step starts
    with pytest.raises(StepFailedError, match=r"skipped after it: example\.transform"):
        pipeline.finalize()
    assert len(pipeline) == 3
    # A rerun does only what did not succeed: the failure again, and those never started.
    again = Pipeline.create("fast", root=root, max_workers=2)
    regenerated = again.run(DataGenerator, params={"count": 8})
    retried = again.run(
        Fail, inputs={"dataset": regenerated.output("datasets")}, params={"match": "dataset_2"}
    )
    again.finalize()
    assert (retried.cached_count, retried.failed_count, retried.succeeded_count) == (position, 1, 7)


def test_pipeline_fail_fast_stops_the_steps_other_workers(root: Root) -> None:
    pipeline = Pipeline.create("fast", root=root, max_workers=2, failure_policy="fail_fast")
    datasets = pipeline.run(DataGenerator, params={"count": 8}).output("datasets")
    first = _names_in_unit_order(pipeline, datasets)[0]
    with pytest.raises(StepFailedError) as info:
        pipeline.run(
            SlowFailOn,
            inputs={"dataset": datasets},
            params={"match": first, "seconds": 1.0},
            execution={"units_per_worker": 4},  # two packs, one per worker, side by side
        )
    assert isinstance(info.value.__cause__, ValueError)
    result = pipeline[1]
    # The first pack fails on its first unit; the other worker finishes at most the unit it
    # had started, then sees the step's failure and starts no more (it used to run all four).
    assert result.failed_count == 1
    assert result.succeeded_count <= 1
    assert result.cancelled_count == 7 - result.succeeded_count
    with pytest.raises(StepFailedError):
        pipeline.finalize()


def test_pipeline_fail_fast_cancelled_ends_as_cancelled_not_as_a_failure(
    root: Root,
) -> None:
    pipeline = Pipeline.create("fast", root=root, max_workers=1, failure_policy="fail_fast")
    datasets = pipeline.run(DataGenerator, params={"count": 4}).output("datasets")
    copying = pipeline.submit(
        SlowCopy,
        inputs={"dataset": datasets},
        params={"seconds": 1.0},
        execution={"units_per_worker": 1},
    )
    time.sleep(1.5)  # the first unit is running
    pipeline.cancel()  # graceful: no failure, so no fail_fast halt and no StepFailedError
    assert copying.result().metadata["status"] == "cancelled"
    summary = pipeline.finalize()
    assert summary["overall_success"] is False


def test_pipeline_validation_errors_write_nothing(root: Root) -> None:
    pipeline = Pipeline.create("invalid", root=root, max_workers=1)
    with pytest.raises(ValueError, match="unknown param 'scael'"):
        pipeline.submit(Transform, inputs={"dataset": ["0" * 32]}, params={"scael": 2})
    with pytest.raises(ValueError, match="unknown input role"):
        pipeline.submit(Transform, inputs={"data": ["0" * 32]})
    with pytest.raises(ValueError, match="missing required input role"):
        pipeline.submit(Transform, inputs={})
    with pytest.raises(ValueError, match="not artifact ids"):
        pipeline.submit(Transform, inputs={"dataset": ["a.csv"]})
    pipeline.finalize()
    assert steps(root).height == 0
    assert len(pipeline) == 0


def test_pipeline_resume_continues_numbering_and_references_finished_steps(
    root: Root,
) -> None:
    first = Pipeline.create("resumable", root=root, max_workers=1)
    first.run(DataGenerator, params={"count": 2})
    first.finalize()
    resumed = Pipeline.resume(root, name="resumable", max_workers=1)
    assert resumed.run_id == first.run_id
    datasets = resumed.output("example.generate", "datasets")
    transformed = resumed.run(Transform, inputs={"dataset": datasets})
    resumed.finalize()
    assert transformed.step_number == 1
    assert transformed.succeeded_count == 2
    runs = Pipeline.list_runs(root)
    (row,) = runs.filter(pl.col("pipeline_run_id") == first.run_id).iter_rows(named=True)
    assert row["steps"] == 2
    assert row["last_status"] == "completed"


def test_pipeline_resume_of_an_unknown_run_says_so(root: Root) -> None:
    with pytest.raises(ValueError, match="no run of pipeline 'nothing'"):
        Pipeline.resume(root, name="nothing")


def test_pipeline_gpu_operation_runs_one_unit_at_a_time(root: Root) -> None:
    pipeline = Pipeline.create("gpu", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3})
    transformed = pipeline.run(
        Transform, inputs={"dataset": generated.output("datasets")}, resources={"gpus": 1}
    )
    pipeline.finalize()
    assert transformed.succeeded_count == 3
    spans = (
        executions(root)
        .filter(pl.col("step_name") == "example.transform")
        .sort("started_at")
        .select("started_at", "ended_at")
        .rows()
    )
    assert len(spans) == 3
    for (_, ended), (started, _) in itertools.pairwise(spans):
        assert ended <= started  # never two at once


def test_pipeline_packed_units_commit_every_unit_once(root: Root) -> None:
    pipeline = Pipeline.create("packed", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 6})
    transformed = pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        execution={"units_per_worker": 3},
    )
    pipeline.finalize()
    assert transformed.succeeded_count == 6
    assert len(pipeline.artifact_ids(transformed.output("dataset"))) == 6
    rows = executions(root).filter(pl.col("step_name") == "example.transform")
    assert rows.height == 6
    assert rows["execution_run_id"].n_unique() == 6
    assert not any((on_this_machine(root) / "staging").glob("*/*/*/*/executions.parquet"))


def test_pipeline_reference_to_a_role_the_step_lacks_is_refused(root: Root) -> None:
    pipeline = Pipeline.create("roles", root=root, max_workers=1)
    generated = pipeline.submit(DataGenerator, params={"count": 1})
    wrong = OutputReference(generated.step_number, "dataset", "data")  # the role is "datasets"
    with pytest.raises(ValueError, match="which has roles: datasets"):
        pipeline.submit(Transform, inputs={"dataset": wrong})
    pipeline.finalize()
