"""The dashboard on a root stemma-core alone built (``core.sqlite``, never imported into Delta).

Read with stemma-storage installed and ``$STEMMA_STORE`` unset, as ``stemma tui`` is on a
login node: the runs list, a run's steps, a step's executions and outputs, and an artifact's
lineage all come from ``core.sqlite`` (the runs' state files are removed, so only history can
answer), and the root is left byte for byte as it was.
"""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from textual.pilot import Pilot

from stemma.core.store.history_source import history_kind
from stemma.tui.app import StemmaApp
from stemma.tui.screens import ArtifactScreen, RunScreen, StepScreen

from .conftest import FilledStore, drive, row_count, until
from .test_open_where import SIZES

SCRIPT = """
import sys

from stemma.core.examples import DataGenerator, MetricCalculator, Transform
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("core", root=sys.argv[1], max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    datasets = {"dataset": generated.output("datasets")}
    scaled = pipeline.run(Transform, inputs=datasets, params={"scale": 2.0})
    pipeline.run(MetricCalculator, inputs={"dataset": scaled.output("dataset")})
    pipeline.finalize()
    print(pipeline.run_id)
"""


@pytest.fixture(scope="module")
def sqlite_root(tmp_path_factory: pytest.TempPathFactory) -> FilledStore:
    """generate (2 CSVs) → transform → metrics, recorded by core's SQLite store.

    Built by another process, as a root is: its connections closed, the database at rest.
    """
    where = tmp_path_factory.mktemp("sqlite")
    (where / "build.py").write_text(SCRIPT)
    root = where / "store"
    done = subprocess.run(
        [sys.executable, str(where / "build.py"), str(root)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=where,
        env={**os.environ, "STEMMA_STORE": "sqlite"},
    )
    assert done.returncode == 0, done.stderr
    shutil.rmtree(root / "runs")  # no state file: the runs list must read history
    return FilledStore(root=root, run_id=done.stdout.split()[-1])


@pytest.fixture(autouse=True)
def _no_store_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STEMMA_STORE", raising=False)  # stemma-storage's Delta is the default


def _contents(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        )
        for path in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_dashboard_reads_a_sqlite_roots_runs_steps_executions_and_lineage(
    sqlite_root: FilledStore, size: tuple[int, int]
) -> None:
    assert history_kind(sqlite_root.root) == "sqlite"
    before = _contents(sqlite_root.root)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: row_count(app, "#runs") == 1, "the run from history")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
        await until(pilot, lambda: row_count(app, "#steps") == 3, "its three steps")
        app.open_step(sqlite_root.run_id, 1)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await until(pilot, lambda: row_count(app, "#executions-table") == 2, "executions")
        await until(pilot, lambda: row_count(app, "#outputs-table") == 2, "outputs")
        await pilot.press("o")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ArtifactScreen), "the artifact")
        await until(pilot, lambda: row_count(app, "#up") == 1, "made from the dataset")
        await until(pilot, lambda: row_count(app, "#down") == 1, "read by metrics")
        await until(pilot, lambda: row_count(app, "#preview-table") > 0, "the preview")

    drive(sqlite_root.root, scenario, size=size)
    gc.collect()  # the app's SQLite connections close, as at the end of `stemma tui`
    assert _contents(sqlite_root.root) == before
