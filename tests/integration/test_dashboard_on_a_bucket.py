"""The dashboard on a root in S3: runs from the local half, steps and artifacts from the bucket.

``stemma tui s3://…`` is the same app: its runs list is read from this machine's local half
(no request), a step's rows and outputs from the tables in the bucket.
"""

from __future__ import annotations

import pathlib

import pytest
from textual.pilot import Pilot

from stemma.core import OUT, apply, run
from stemma.core.cli import existing_root
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.screens import StepScreen
from stemma.tui.widgets.tables import table_at
from tests.storage.object_roots.conftest import make_bucket
from tests.storage.object_roots.conftest import s3_env as s3_env  # (the fixture, used below)
from tests.tui.conftest import drive, until


def write(source: str, out_path: str) -> int:
    text = pathlib.Path(source).read_text()
    pathlib.Path(out_path).write_text(text)
    return len(text)


@pytest.fixture
def bucket_run(s3_env: str, tmp_path: pathlib.Path) -> tuple[pathlib.Path, str]:
    """A run on ``s3://…/dash``, and the root ``stemma tui s3://…/dash`` opens (its local half)."""
    url = f"s3://{make_bucket(s3_env)}/dash"
    raw = tmp_path / "hello.txt"
    raw.write_text("hello")
    run(apply(name="words/said", fn=write, version="v1", source=raw, out_path=OUT), root=url)
    root = existing_root(url)  # what the command does with its ROOT
    [row] = DashboardClient(root).runs()
    return root, row.run_id


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_dashboard_shows_a_bucket_roots_run_its_step_and_outputs(
    bucket_run: tuple[pathlib.Path, str], size: tuple[int, int]
) -> None:
    root, run_id = bucket_run
    client = DashboardClient(root)
    [step] = client.run(run_id).steps
    view = client.step(run_id, step.number)
    assert sorted(view.outputs) == ["output", "value"]

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: table_at(app.screen, "#runs").row_count == 1, "the run")
        app.open_step(run_id, step.number)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await pilot.pause()
        outputs = table_at(app.screen, "#outputs-table")
        await until(pilot, lambda: outputs.row_count == 2, "the output and the value")
        assert [str(outputs.get_row_at(i)[0]) for i in range(2)] == ["output", "value"]

    drive(root, scenario, size=size)
