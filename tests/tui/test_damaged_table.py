"""A damaged Delta table is said once, named, with the fix; what can still be read is shown.

The root is a real Delta root filled by a real pipeline (copied: the session's store stays
whole), with one of its steps table's Parquet files overwritten with garbage, or a commit of
its log deleted. Toasts are off in ``run_test`` by default: these tests turn them on.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets._toast import Toast

from stemma.storage.root_check import check_root
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.client.history import HistoryCache
from stemma.tui.screens import RunScreen

from .conftest import FilledStore, Scenario, row_count, until
from .test_snapshots import screen_text

STEPS = Path("delta") / "orchestration" / "steps"


def drive(root: Path, scenario: Scenario) -> None:
    """The real app at 160x48 (room for the whole message) with its toasts shown."""

    async def play() -> None:
        app = StemmaApp(root)
        async with app.run_test(size=(160, 48), notifications=True) as pilot:
            await scenario(app, pilot)

    asyncio.run(play())


def _copy(filled: FilledStore, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(filled.root, root)
    return root


def _garble_a_steps_file(root: Path) -> Path:
    damaged = sorted((root / STEPS).glob("*.parquet"))[0]
    damaged.write_bytes(b"not parquet at all")
    return damaged


def _damage_toasts(app: StemmaApp) -> set[str]:
    """The notifications shown as toasts that mention the damage, by their holder's id."""
    return {
        str(toast.parent.id)
        for toast in app.screen.query(Toast)
        if toast.parent is not None and "damaged table" in str(toast.render())
    }


def test_garbage_parquet_file_is_said_once_with_its_name_and_the_runs_stay(
    filled: FilledStore, tmp_path: Path
) -> None:
    root = _copy(filled, tmp_path)
    damaged = _garble_a_steps_file(root)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: row_count(app, "#runs") == 1, "the run, from its state file")
        await until(pilot, lambda: damaged.name in screen_text(app), "the damaged file named")
        toasts: set[str] = set()
        looks = lines_seen = 0
        deadline = time.monotonic() + 3.5  # the runs list reads every second
        while time.monotonic() < deadline:
            text = screen_text(app)
            looks += 1
            lines_seen += "could not read history: damaged table delta/orchestration/steps" in text
            assert row_count(app, "#runs") == 1
            toasts |= _damage_toasts(app)
            await pilot.pause(0.25)
        assert len(toasts) == 1  # one toast, not one a second
        assert lines_seen == looks  # and the summary line kept saying it all along
        said = next(iter(app.errors_said))
        assert "is not Parquet" in said
        assert f"Fix: `stemma check --repair {root}` moves it out" in said
        app.open_run(filled.run_id)  # a run still opens, from its state file
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
        await until(pilot, lambda: row_count(app, "#steps") == 4, "its steps")
        assert len(app.errors_said) == 1

    drive(root, scenario)


def test_the_fix_the_message_gives_makes_history_readable_again(
    filled: FilledStore, tmp_path: Path
) -> None:
    root = _copy(filled, tmp_path)
    damaged = _garble_a_steps_file(root)
    client = DashboardClient(root)
    assert [row.run_id for row in client.runs()] == [filled.run_id]
    assert client.damage is not None
    assert f"{damaged.name} is not Parquet" in client.damage
    assert f"`stemma check --repair {root}`" in client.damage
    assert check_root(root, repair=True).repaired  # the fix as said
    assert not damaged.exists()
    assert HistoryCache(root).rows()  # every other commit of the table reads again


def test_a_deleted_commit_is_named_with_its_file(filled: FilledStore, tmp_path: Path) -> None:
    root = _copy(filled, tmp_path)
    commits = sorted((root / STEPS / "_delta_log").glob("*.json"))
    if len(commits) < 3:
        pytest.fail(f"the filled store's steps table has {len(commits)} commits; need 3")
    commits[1].unlink()
    client = DashboardClient(root)
    assert [row.run_id for row in client.runs()] == [filled.run_id]
    assert client.damage is not None
    assert f"_delta_log/{commits[1].name} is missing" in client.damage
    assert "back from a backup" in client.damage


def test_a_step_and_an_artifact_of_a_damaged_root_name_the_file_not_polars_words(
    filled: FilledStore, tmp_path: Path
) -> None:
    root = _copy(filled, tmp_path)
    artifact_id = sorted(DashboardClient(root).step(filled.run_id, 0).outputs["datasets"])[0]
    executions = sorted((root / "delta" / "orchestration" / "executions").glob("*.parquet"))
    for damaged in executions:
        damaged.write_bytes(b"not parquet at all")

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(filled.run_id, 0)
        await until(pilot, lambda: "damaged table" in screen_text(app), "the step's damage said")
        text = screen_text(app)
        assert "delta/orchestration/executions" in text
        assert "magic bytes" not in text
        said = [s for s in app.errors_said if s.startswith("step 0")]
        assert len(said) == 1
        assert any(d.name in said[0] for d in executions)
        assert "state file" not in said[0]  # that tail is the runs list's, not the step's
        app.open_artifact(artifact_id)
        await until(pilot, lambda: len(app.errors_said) >= 2, "the artifact's damage said")
        said = [s for s in app.errors_said if s.startswith("artifact")]
        assert "damaged table delta/orchestration/executions" in said[0]

    drive(root, scenario)
