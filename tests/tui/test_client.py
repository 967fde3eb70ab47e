"""The headless client: never imports Textual, and reads a real store."""

from __future__ import annotations

import json
import subprocess
import sys

from stemma.tui.client import DashboardClient

from .conftest import FilledStore

PROBE = """
import json, sys
import stemma.tui.client
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))
print(json.dumps(heavy))
"""


def test_importing_the_client_loads_no_textual_and_no_rich() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []


def test_client_reads_runs_steps_and_an_artifact_of_a_real_store(filled: FilledStore) -> None:
    client = DashboardClient(filled.root)
    [row] = client.runs()
    assert (row.run_id, row.steps_total) == (filled.run_id, 4)
    view = client.run(filled.run_id)
    assert [step.name for step in view.steps][-1] == "example.fail"
    step = client.step(filled.run_id, 3)
    failed = [e for e in step.executions if not e.success]
    assert len(failed) == 1
    assert failed[0].failure_log is not None
    assert "refusing" in client.read_log(failed[0].failure_log)
    [artifact_id, *_] = step.outputs["dataset"]
    artifact = client.artifact(artifact_id)
    assert artifact.preview_kind == "table"
    assert artifact.preview_rows[0] == ("x", "y")
    assert len(artifact.up) == 1
