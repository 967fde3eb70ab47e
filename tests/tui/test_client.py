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


def test_history_rows_aggregated_in_polars_match_the_rows_built_from_events(
    filled: FilledStore,
) -> None:
    from stemma.core.runs.run_rows import rows_from_history
    from stemma.core.store import open_run_store
    from stemma.storage.queries import steps
    from stemma.tui.client.history_rows import rows_from_steps_table

    from_events = rows_from_history(open_run_store(filled.root).step_events())
    assert rows_from_steps_table(steps(filled.root)) == from_events
