"""InputSpec.hydrate and with_associated, honoured by creators and curators."""

from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
from spec_operations import KeepScored, ReportInputs

from stemma.core.examples import DataGenerator, MetricCalculator
from stemma.core.front.pipeline import Pipeline
from stemma.core.store import open_run_store


def test_hydrate_false_and_with_associated_reach_a_creator_and_a_curator(
    tmp_path: pathlib.Path,
) -> None:
    pipeline = Pipeline.create("specs", root=tmp_path, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 4})
    all_ids = pipeline.artifact_ids(generated.output("datasets"))
    scored_only = sorted(all_ids)[:2]  # metrics for two of the three datasets
    pipeline.run(MetricCalculator, inputs={"dataset": scored_only})
    kept = pipeline.run(KeepScored, inputs={"dataset": generated.output("datasets")})
    # (before ReportInputs, whose reports are metrics derived from every dataset)
    reported = pipeline.run(ReportInputs, inputs={"dataset": generated.output("datasets")})
    reports = open_run_store(tmp_path).load_artifacts(
        pipeline.artifact_ids(reported.output("report"))
    )
    kept_ids = pipeline.artifact_ids(kept.output("dataset"))
    pipeline.finalize()

    seen = [json.loads(a.content or b"{}") for a in reports.values()]
    assert len(seen) == 3
    assert all(not report["has_content"] for report in seen)  # hydrate=False: ids only
    assert all(report["files"] == 0 for report in seen)  # and nothing materialized
    assert sorted(len(report["metrics"]) for report in seen) == [0, 1, 1]
    assert all("mean_y" in m for report in seen for m in report["metrics"])
    assert sorted(kept_ids) == scored_only


def test_a_newly_derived_associated_artifact_makes_the_unit_run_again(
    tmp_path: pathlib.Path,
) -> None:
    pipeline = Pipeline.create("assoc-keys", root=tmp_path, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 4})
    first, second = sorted(pipeline.artifact_ids(generated.output("datasets")))
    pipeline.run(MetricCalculator, inputs={"dataset": [first]})
    before = pipeline.run(KeepScored, inputs={"dataset": generated.output("datasets")})
    again = pipeline.run(KeepScored, inputs={"dataset": generated.output("datasets")})
    pipeline.run(MetricCalculator, inputs={"dataset": [second]})  # a new association
    after = pipeline.run(KeepScored, inputs={"dataset": generated.output("datasets")})
    kept_before = pipeline.artifact_ids(before.output("dataset"))
    kept_after = pipeline.artifact_ids(after.output("dataset"))
    events = {
        e.step_number: e
        for e in open_run_store(tmp_path).step_events(pipeline.run_id)
        if e.status != "running"
    }
    pipeline.finalize()
    assert kept_before == (first,)
    assert events[again.step_number].metadata["execution_cache_hits"] == 1  # nothing new: a hit
    assert events[after.step_number].metadata["execution_cache_hits"] == 0  # new metric: a miss
    assert sorted(kept_after) == [first, second]
