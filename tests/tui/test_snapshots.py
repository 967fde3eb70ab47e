"""What each screen looks like at 80x24 and 160x48, as text, against files kept in snapshots/.

A changed screen fails the test and leaves the new rendering beside the old one as ``.new``;
run with ``STEMMA_UPDATE_SNAPSHOTS=1`` to accept it, and review the diff in the commit.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
from textual.pilot import Pilot

from stemma.core.live import RunState, RunStatus, StepState, write_state
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.screens import ArtifactScreen, HelpScreen, LaunchScreen, RunScreen, StepScreen
from stemma.tui.snapshot import screen_text
from stemma.tui.widgets.tables import table_at

from .conftest import FilledStore, drive, row_count, until
from .fixed_history import EXECUTED, write_fixed_history

SNAPSHOTS = Path(__file__).with_name("snapshots")
SIZES = [(80, 24), (160, 48)]
T0 = dt.datetime(2026, 11, 29, 9, 0, tzinfo=dt.UTC)


async def settled(app: StemmaApp, pilot: Pilot[None], last: str = "palette") -> None:
    """Wait until the screen shows ``last`` (drawn last: the footer) and stops changing."""
    await until(pilot, lambda: last in screen_text(app), repr(last))
    before = ""
    while (now := screen_text(app)) != before:
        before = now
        await pilot.pause(0.1)


async def runs_list_done(app: StemmaApp, pilot: Pilot[None]) -> None:
    """Wait until the runs list has read every run and shows its keys.

    Both come after its first frame (the summary says ``reading the rest…`` until then): a
    screen opened over it before that could be captured over a half-finished list.
    """

    def done() -> bool:
        text = screen_text(app)
        return "palette" in text and "reading the rest" not in text

    await until(pilot, done, "the whole runs list and its keys")


def check(name: str, text: str) -> None:
    """Compare with the kept snapshot (or replace it when asked to)."""
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("STEMMA_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text)
        return
    assert path.is_file(), f"no snapshot {path.name}: run with STEMMA_UPDATE_SNAPSHOTS=1"
    if path.read_text() != text:
        path.with_suffix(".new").write_text(text)
        raise AssertionError(f"{name} changed: compare {path.name} with {path.stem}.new")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Four finished runs with fixed times, on a root named ``store`` (the title shows it)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    root = Path("store")
    for index, status in enumerate(
        (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.RUNNING)
    ):
        _write(root, index, status)
    write_fixed_history(root, FAILED_RUN, T0 + dt.timedelta(hours=1))
    yield root
    monkeypatch.delenv("TZ")
    time.tzset()


def _run_id(index: int) -> str:
    return f"demo_20261129_0{9 + index}0000_0000000{index}"


FAILED_RUN = _run_id(1)
"""The run whose history the store also holds (fixed ids and times): its step screen."""


def _write(root: Path, index: int, status: RunStatus) -> None:
    start = T0 + dt.timedelta(hours=index)

    def at(seconds: float) -> str:
        return (start + dt.timedelta(seconds=seconds)).isoformat()

    failed = 3 if status is RunStatus.FAILED else 0
    steps = (
        StepState(
            number=0,
            name="example.generate",
            operation="g",
            status="completed",
            total=1,
            succeeded=1,
            started_at=at(0),
            ended_at=at(4),
        ),
        StepState(
            number=1,
            name="example.slow_copy",
            operation="s",
            status="completed",
            total=40,
            cached=10,
            succeeded=37,  # 10 of them cached
            failed=failed,
            started_at=at(4),
            ended_at=at(95),
            jobs={"COMPLETED": 37, "FAILED": failed},
            upstream=(0,),
        ),
        StepState(
            number=2,
            name="example.metrics",
            operation="m",
            status="cancelled" if status is RunStatus.CANCELLED else "completed",
            total=40,
            succeeded=22,
            cancelled=18 if status is RunStatus.CANCELLED else 0,
            started_at=at(95),
            ended_at=at(120),
            upstream=(1,),
        ),
    )
    final = status is not RunStatus.RUNNING
    write_state(
        root,
        RunState(
            run_id=_run_id(index),
            name="demo",
            status=status,
            pid=999_999_999,  # no such process: the running one shows as stale
            host="node-a",  # the running one is stale by its old heartbeat
            root=str(root),
            backend="slurm",
            started_at=start.isoformat(),
            heartbeat=at(120),
            ended_at=at(120) if final else None,
            cancel_level=1 if status is RunStatus.CANCELLED else 0,
            user="ada",
            command=("pipelines/demo.py", "--size", str(index + 1)),
            cwd="/home/ada",
            steps=steps,
        ),
    )


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_of_the_runs_list(store: Path, size: tuple[int, int]) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: table_at(app.screen, "#runs").row_count == 4, "the runs")
        await runs_list_done(app, pilot)
        await settled(app, pilot)
        check(f"runs_{size[0]}x{size[1]}", screen_text(app))

    drive(store, scenario, size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_of_a_cancelled_run_on_slurm(store: Path, size: tuple[int, int]) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_run("demo_20261129_0110000_00000002")
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run")
        await until(pilot, lambda: row_count(app, "#steps") == 3, "the steps")
        await settled(app, pilot)
        check(f"run_{size[0]}x{size[1]}", screen_text(app))

    drive(store, scenario, size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_of_the_help(store: Path, size: tuple[int, int]) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await runs_list_done(app, pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await settled(app, pilot, "stemma reap RUN")
        check(f"help_{size[0]}x{size[1]}", screen_text(app))

    drive(store, scenario, size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_of_a_step_with_failed_executions(store: Path, size: tuple[int, int]) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(FAILED_RUN, 1)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step")
        await until(pilot, lambda: row_count(app, "#executions-table") == EXECUTED, "executions")
        await settled(app, pilot)
        check(f"step_{size[0]}x{size[1]}", screen_text(app))

    drive(store, scenario, size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_of_the_launch_prompt(store: Path, size: tuple[int, int]) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: row_count(app, "#runs") == 4, "the runs")
        await runs_list_done(app, pilot)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, LaunchScreen), "the prompt")
        await pilot.press(*"flows/nightly.py")
        await settled(app, pilot, "Esc cancels")
        check(f"launch_{size[0]}x{size[1]}", screen_text(app))

    drive(store, scenario, size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_of_a_csv_artifact_with_its_lineage(
    filled: FilledStore, size: tuple[int, int]
) -> None:
    # Artifact ids are content hashes and the example data is seeded: the same on every run.
    outputs = DashboardClient(filled.root).step(filled.run_id, 1).outputs
    artifact_id = sorted(outputs["dataset"])[0]

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_artifact(artifact_id)
        await until(pilot, lambda: isinstance(app.screen, ArtifactScreen), "the artifact")
        await until(pilot, lambda: row_count(app, "#preview-table") > 0, "the preview")
        await settled(app, pilot)
        text = screen_text(app)
        view = cast("ArtifactScreen", app.screen).view
        assert view is not None
        for edge in (*view.up, *view.down):  # execution ids are fresh on every run
            text = text.replace(edge.short_execution, "<exec #>")
        check(f"artifact_{size[0]}x{size[1]}", text)

    drive(filled.root, scenario, size)


def test_every_screen_has_a_snapshot_at_both_sizes() -> None:
    from stemma.tui import screens

    missing = [
        f"{name.removesuffix('Screen').lower()}_{width}x{height}.txt"
        for name in screens.__all__
        for width, height in SIZES
        if not (SNAPSHOTS / f"{name.removesuffix('Screen').lower()}_{width}x{height}.txt").is_file()
    ]
    assert missing == [], f"screens without snapshots: {missing}"


def test_a_dialog_s_text_shows_the_screen_beneath_it_while_the_dialog_is_being_redrawn(
    store: Path,
) -> None:
    """A redraw of the launch dialog between two frames still shows the runs list beneath it.

    The dialog's see-through background draws the screens below it whenever its lines are
    redrawn; read without them (as the text once was), the runs list came out blank.
    """

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await until(pilot, lambda: row_count(app, "#runs") == 4, "the runs")
        await runs_list_done(app, pilot)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, LaunchScreen), "the prompt")
        await settled(app, pilot, "Esc cancels")
        drawn = screen_text(app)
        app.screen.refresh()  # its lines are redrawn on the next read, before the next frame
        redrawn = screen_text(app)
        assert "demo.py --size 4" in drawn.splitlines()[2]
        assert redrawn == drawn

    drive(store, scenario, (80, 24))
