"""The first frame: the newest runs are read before the app starts, so it shows them at once;
a slow disk delays it by a bounded time and leaves the reading to the runs screen's worker."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from stemma.core.runs.run_rows import RunRow
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient, first_runs
from stemma.tui.client.first_runs import read_first_runs
from stemma.tui.widgets.tables import table_at

from .conftest import drive, live_state, until


class StuckClient(DashboardClient):
    """A client whose state files sit on a disk that does not answer until released."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.release = threading.Event()

    def live_runs(self, newest: int | None = None) -> list[RunRow]:
        self.release.wait(30)
        return super().live_runs(newest)


def test_the_app_reads_the_newest_runs_before_its_first_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(first_runs, "FIRST_READ_SECONDS", 60.0)
    state = live_state(tmp_path)
    app = StemmaApp(tmp_path)
    assert [row.run_id for row in app.first_runs or []] == [state.run_id]


def test_the_first_frame_has_the_rows_before_any_worker_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(first_runs, "FIRST_READ_SECONDS", 60.0)  # a loaded machine is not slow disk
    live_state(tmp_path)
    shown: list[int] = []

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        shown.append(table_at(app.screen, "#runs").row_count)  # as soon as the app is ready
        assert app.first_runs is None  # taken by the runs screen
        await until(pilot, lambda: "reading the rest" not in _summary(app), "the full read")

    drive(tmp_path, scenario)
    assert shown == [1]


def test_a_first_read_that_hangs_gives_up_after_its_timeout(tmp_path: Path) -> None:
    live_state(tmp_path)
    client = StuckClient(tmp_path)
    started = time.monotonic()
    assert read_first_runs(client, timeout=0.2) is None
    assert 0.2 <= time.monotonic() - started < 5
    client.release.set()


def test_a_first_read_that_fails_gives_none_so_the_worker_reads_again(tmp_path: Path) -> None:
    class FailingClient(DashboardClient):
        def live_runs(self, newest: int | None = None) -> list[RunRow]:
            raise RuntimeError("disk on fire")

    assert read_first_runs(FailingClient(tmp_path)) is None


def _summary(app: StemmaApp) -> str:
    return str(app.screen.query_one("#summary", Static).render())
