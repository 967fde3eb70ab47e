"""Run state files written the way the orchestrator writes them, for the command's readers."""

from __future__ import annotations

import datetime as dt
import os
import socket
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from stemma.core.live import RunState, RunStatus, StepState, write_state

StateFactory = Callable[..., RunState]


def _step(number: int, name: str, **counts: int | str | None) -> StepState:
    return StepState(number=number, name=name, operation=f"example.{name}", **counts)  # pyright: ignore[reportArgumentType]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def make_state(root: Path) -> StateFactory:
    """Write a state file (running, alive, in this process) and return it."""

    def make(
        run_id: str = "first_20261129_100000_aaaaaaaa",
        status: RunStatus = RunStatus.RUNNING,
        *,
        steps: tuple[StepState, ...] | None = None,
        heartbeat: dt.datetime | None = None,
        started: dt.datetime | None = None,
        cancel_level: int = 0,
    ) -> RunState:
        now = dt.datetime.now(dt.UTC)
        state = RunState(
            run_id=run_id,
            name=run_id.rsplit("_", 3)[0],
            status=status,
            pid=os.getpid(),
            host=socket.gethostname(),
            root=str(root),
            backend="local",
            started_at=(started or now - dt.timedelta(seconds=5)).isoformat(),
            heartbeat=(heartbeat or now).isoformat(),
            ended_at=None if status is RunStatus.RUNNING else now.isoformat(),
            cancel_level=cancel_level,
            steps=steps
            if steps is not None
            else (
                _step(0, "generate", status="completed", total=1, succeeded=1),
                _step(1, "transform", status="running", total=4, succeeded=1, running=2),
            ),
        )
        write_state(root, state)
        return state

    return make


def advance(state: RunState, **changes: object) -> RunState:
    """The same state with some fields changed (a later write by the orchestrator)."""
    return replace(state, **changes)  # pyright: ignore[reportArgumentType]
