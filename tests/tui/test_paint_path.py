"""What keeps the first paint fast on a big root: state files first, no Delta or polars on the
paint path, and a history caught up by reading only what each commit added."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline
from stemma.storage.queries import steps
from stemma.tui.client import DashboardClient
from stemma.tui.client.steps_log import StepsLog

from .conftest import FilledStore, live_state

PROBE = """
import json, sys
from pathlib import Path
import stemma.tui.app
from stemma.tui.client import DashboardClient
rows = DashboardClient(Path(sys.argv[1])).live_runs(10)
later = ('polars', 'pyarrow', 'deltalake', 'stemma.storage', 'stemma.tui.screens.step',
         'stemma.tui.screens.artifact', 'stemma.tui.screens.run', 'textual.widgets._tabbed_content')
heavy = sorted(m for m in later if m in sys.modules)
print(json.dumps({"rows": len(rows), "heavy": heavy}))
"""


def test_the_app_and_the_first_runs_read_load_no_polars_delta_storage_or_other_screens(
    filled: FilledStore,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(filled.root)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == {"rows": 1, "heavy": []}


COMMAND_PROBE = """
import json, sys
from stemma.core.cli.main import main
try:
    main(["--root", "r", "tui", "--help"])
except SystemExit as done:
    code = done.code
heavy = ("polars", "pyarrow", "pydantic", "stemma.storage", "stemma.core.cli.plan_commands")
print(json.dumps({"code": code, "heavy": sorted(m for m in heavy if m in sys.modules)}))
"""


def test_the_tui_command_loads_no_other_command_and_no_polars_or_pydantic() -> None:
    # `stemma tui` used to import every subcommand's module (storage's load polars and
    # pyarrow, plan's pydantic): ~0.8 s before the dashboard even started.
    done = subprocess.run(
        [sys.executable, "-c", COMMAND_PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    probed = json.loads(done.stdout.splitlines()[-1])
    assert probed == {"code": 0, "heavy": []}
    assert "usage: stemma tui" in done.stdout


def test_live_runs_newest_reads_only_the_most_recently_written_state_files(
    tmp_path: Path,
) -> None:
    ids = [f"r_20261129_12000{i}_0000000{i}" for i in range(5)]
    for age, run_id in enumerate(reversed(ids)):
        state = live_state(tmp_path, run_id)
        path = tmp_path / "runs" / state.run_id / "state.json"
        os.utime(path, ns=(10**18 - age * 10**9, 10**18 - age * 10**9))
    client = DashboardClient(tmp_path)
    assert {row.run_id for row in client.live_runs(2)} == set(ids[-2:])
    assert {row.run_id for row in client.live_runs()} == set(ids)


@pytest.mark.parametrize("name", ["store", "my store"])  # delta-rs escapes a space in its URIs
def test_the_steps_log_reads_only_the_files_a_new_commit_added(
    filled: FilledStore, tmp_path: Path, name: str
) -> None:
    root = tmp_path / name
    shutil.copytree(filled.root, root)
    log = StepsLog(root)
    first = log.frame()
    assert first.height == steps(root).height
    files = log.files_read
    assert files > 2
    pipeline = Pipeline.create("again", root=root, max_workers=1)
    pipeline.run(DataGenerator, params={"count": 1, "rows": 2, "seed": 7})
    pipeline.finalize()
    caught_up = log.frame()
    assert caught_up.sort("timestamp").equals(steps(root).sort("timestamp"))
    assert caught_up.height > first.height
    assert 0 < log.files_read - files < files  # the new commits' files only, not all again


def test_history_rows_caught_up_incrementally_match_a_full_aggregation(
    filled: FilledStore, tmp_path: Path
) -> None:
    from stemma.tui.client.history_rows import rows_from_steps_table

    root = tmp_path / "store"
    shutil.copytree(filled.root, root)
    client = DashboardClient(root)
    assert [row.run_id for row in client.runs()] == [filled.run_id]
    pipeline = Pipeline.create("again", root=root, max_workers=1)
    pipeline.run(DataGenerator, params={"count": 1, "rows": 2, "seed": 8})
    pipeline.finalize()
    shutil.rmtree(root / "runs")  # rows from history alone, as on a root without state files
    caught_up = sorted(client.runs(), key=lambda row: row.run_id)
    full = sorted(rows_from_steps_table(steps(root)), key=lambda row: row.run_id)
    assert caught_up == full
    assert len(full) == 2
