"""A real store filled by a real pipeline, and driving the real app with Pilot."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import DataTable

from stemma.core.examples import DataGenerator, Fail, MetricCalculator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.live import RunState, RunStatus, StepState, write_state
from stemma.tui.app import StemmaApp

SIZE = (80, 24)
DEADLINE_SECONDS = 15.0


@dataclass(frozen=True)
class FilledStore:
    root: Path
    run_id: str


@pytest.fixture(scope="session")
def filled(tmp_path_factory: pytest.TempPathFactory) -> FilledStore:
    """generate (3 CSVs) → transform → metrics, and a step failing on one of the three."""
    root = tmp_path_factory.mktemp("tui") / "store"
    pipeline = Pipeline.create("first", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 4})
    transformed = pipeline.run(
        Transform, inputs={"dataset": generated.output("datasets")}, params={"scale": 2.0}
    )
    pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    pipeline.run(Fail, inputs={"dataset": generated.output("datasets")}, params={"match": "_1"})
    pipeline.finalize()
    return FilledStore(root=root, run_id=pipeline.run_id)


Scenario = Callable[[StemmaApp, Pilot[None]], Awaitable[None]]


def drive(root: Path, scenario: Scenario, size: tuple[int, int] = SIZE) -> None:
    """Run the real app headless at ``size`` and play ``scenario`` against it."""

    async def play() -> None:
        app = StemmaApp(root)
        async with app.run_test(size=size) as pilot:
            await scenario(app, pilot)

    asyncio.run(play())


async def until(
    pilot: Pilot[None],
    condition: Callable[[], bool],
    what: str,
    seconds: float = DEADLINE_SECONDS,
) -> None:
    """Let the app run until ``condition`` holds; fail after a deadline, saying what was awaited."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def live_state(
    root: Path,
    run_id: str = "live_20261129_120000_0000abcd",
    *,
    steps: tuple[StepState, ...] | None = None,
    status: RunStatus = RunStatus.RUNNING,
    cancel_level: int = 0,
) -> RunState:
    """Write the state file a running orchestrator (this process) would write."""
    now = dt.datetime.now(dt.UTC)
    state = RunState(
        run_id=run_id,
        name=run_id.rsplit("_", 3)[0],
        status=status,
        pid=os.getpid(),
        host=socket.gethostname(),
        root=str(root),
        backend="local",
        started_at=(now - dt.timedelta(seconds=30)).isoformat(),
        heartbeat=now.isoformat(),
        cancel_level=cancel_level,
        steps=steps
        if steps is not None
        else (
            StepState(
                number=0,
                name="generate",
                operation="g",
                status="completed",
                total=1,
                succeeded=1,
                started_at=now.isoformat(),
                ended_at=now.isoformat(),
            ),
            StepState(
                number=1,
                name="transform",
                operation="t",
                status="running",
                total=10,
                succeeded=2,
                running=2,
                started_at=now.isoformat(),
            ),
        ),
    )
    write_state(root, state)
    return state


def row_count(app: StemmaApp, selector: str) -> int:
    """Rows of the table ``selector`` on the current screen (0 while it is not composed yet)."""
    from textual.widgets import DataTable

    found = app.screen.query(selector)
    return next((t.row_count for t in found if isinstance(t, DataTable)), 0)


@contextmanager
def script_running(
    script: Path, root: Path, env: dict[str, str] | None = None
) -> Generator[subprocess.Popen[bytes]]:
    """Run a pipeline script on ``root`` in a subprocess while the block runs; kill it after."""
    process = subprocess.Popen([sys.executable, str(script), str(root)], env=env)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=60)


def record_painted(monkeypatch: pytest.MonkeyPatch, table: DataTable[Any]) -> list[int]:
    """The lines ``table`` draws from now on, in order (its ``render_line`` calls)."""
    painted: list[int] = []
    render_line = table.render_line

    def recording(y: int) -> Strip:
        painted.append(y)
        return render_line(y)

    monkeypatch.setattr(table, "render_line", recording)
    return painted
