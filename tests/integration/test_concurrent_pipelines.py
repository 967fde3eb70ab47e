"""The same step asked for by concurrent runs on one root executes once (docs/concepts/store.md)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

from stemma.core.store import open_run_store
from stemma.storage import executions
from tests.roots_under_test import new_root

SCRIPT = pathlib.Path(__file__).with_name("cancellable_pipeline.py")


def test_two_runs_of_one_pipeline_at_once_execute_each_step_once(tmp_path: pathlib.Path) -> None:
    root = new_root(tmp_path)
    runs = [
        subprocess.Popen(
            [sys.executable, str(SCRIPT), str(root), "0.5"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    for run, (_, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
    summaries = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert all(summary["overall_success"] for summary in summaries)
    rows = executions(root)
    per_step = rows.group_by("step_name").len().sort("step_name")
    assert dict(per_step.iter_rows()) == {
        "example.generate": 1,
        "example.slow_copy": 6,
        "example.transform": 6,
    }
    store = open_run_store(root)
    hits = [
        event.metadata.get("cache")
        for summary in summaries
        for event in store.step_events(summary["pipeline_run_id"])
        if event.status == "completed"
    ]
    assert hits.count("step") == 3  # each step was built by one run and reused by the other
