"""The dashboard tutorial's pipeline does real work: every step's artifacts and edges its own.

Run to the end (no pause per dataset), each step offers eight artifacts no other step offers,
``stemma artifacts --step`` finds them, and every lineage edge joins two different artifacts,
made by the step the edge names: nothing is "made from itself".
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

from stemma.storage import artifacts, lineage

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "watch_and_cancel.py"
STEPS = ("example.generate", "example.slow_scale", "example.transform", "example.metrics")


def test_watch_and_cancel_example_steps_each_make_their_own_artifacts(
    tmp_path: pathlib.Path,
) -> None:
    script = tmp_path / EXAMPLE.name
    script.write_bytes(EXAMPLE.read_bytes())
    root = tmp_path / ".stemma"
    done = subprocess.run(
        [sys.executable, script.name, "0"],
        cwd=tmp_path,
        env={**os.environ, "STEMMA_ROOT": str(root)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    by_step: dict[str, set[str]] = {
        step: set(artifacts(root, step_name=step).get_column("artifact_id").to_list())
        for step in STEPS
    }
    assert {step: len(ids) for step, ids in by_step.items()} == dict.fromkeys(STEPS, 8)
    assert len(set[str]().union(*by_step.values())) == 32  # no step offers another's bytes

    metric = sorted(by_step["example.metrics"])[0]
    edges = lineage(root, metric, "up")
    walked = edges.select("depth", "step_name").sort("depth").rows()
    assert walked == [(1, "example.metrics"), (2, "example.transform"), (3, "example.slow_scale")]
    for edge in edges.iter_rows(named=True):
        assert edge["source_artifact_id"] != edge["target_artifact_id"]
        assert edge["target_artifact_id"] in by_step[edge["step_name"]]
