"""Following a run until it ends: plain lines anywhere, rich progress bars on a terminal."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from stemma.core.cli.exit_codes import ExitCode
from stemma.core.cli.run_rows import run_outcome
from stemma.core.cli.watch_lines import change_lines, summary_line
from stemma.core.live import RunState, RunStatus, StepState, read_state

POLL_SECONDS = 0.5
"""How often the state file is read: well inside the orchestrator's one write a second."""

Sleep = Callable[[float], None]


def follow_lines(
    root: Path,
    run_id: str,
    out: TextIO,
    *,
    sleep: Sleep = time.sleep,
    stale_after: float | None = None,
) -> ExitCode:
    """Print one timestamped line per change until the run ends; return its exit code."""
    previous: RunState | None = None
    while True:
        current = _read(root, run_id, stale_after)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for line in change_lines(previous, current):
            out.write(f"{stamp} {line}\n")
        out.flush()
        if current.status is not RunStatus.RUNNING:
            out.write(f"{stamp} {summary_line(current)}\n")
            out.flush()
            return ExitCode.for_run_status(run_outcome(current).value)
        previous = current
        sleep(POLL_SECONDS)


def follow_progress(root: Path, run_id: str, out: TextIO, *, sleep: Sleep = time.sleep) -> ExitCode:
    """Rich progress bars, one per step, until the run ends (needs rich)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
    )

    console = Console(file=out)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
    )
    tasks: dict[int, TaskID] = {}
    with Progress(*columns, console=console, transient=False) as progress:
        while True:
            current = _read(root, run_id, None)
            for step in current.steps:
                label = f"{step.number:>2} {step.name[:24]:<24}"
                stopped = [f"{n} {what}" for n, what in _stopped(step) if n]
                detail = " · ".join([step.status, *stopped])
                if step.cache == "step":
                    detail += " (cache hit)"
                if step.number not in tasks:
                    tasks[step.number] = progress.add_task(label, total=None, detail=detail)
                progress.update(
                    tasks[step.number],
                    total=step.total or None,
                    completed=step.done,
                    detail=detail,
                )
            if current.status is not RunStatus.RUNNING:
                break
            sleep(POLL_SECONDS)
    console.print(summary_line(current))
    return ExitCode.for_run_status(run_outcome(current).value)


def _stopped(step: StepState) -> tuple[tuple[int, str], ...]:
    return ((step.failed, "failed"), (step.cancelled, "cancelled"))


def _read(root: Path, run_id: str, stale_after: float | None) -> RunState:
    if stale_after is None:
        return read_state(root, run_id)
    return read_state(root, run_id, stale_after=stale_after)
