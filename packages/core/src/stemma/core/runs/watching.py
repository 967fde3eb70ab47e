"""Following a run until it ends: plain lines anywhere, rich progress bars on a terminal.

``stemma watch`` follows one run from another process; ``stemma run`` follows the runs its own
script starts (:mod:`stemma.core.runs.run_progress`). Both print through :class:`LineFeed` and
:class:`StepBars`, so a run reads the same in both.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunState, RunStatus, StepState, read_state
from stemma.core.runs.run_rows import run_outcome
from stemma.core.runs.watch_lines import LineFeed, summary_line

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

POLL_SECONDS = 0.5
"""How often the state file is read: well inside the orchestrator's one write a second."""

Sleep = Callable[[float], None]


def write_lines(out: TextIO, feed: LineFeed, state: RunState, now: float) -> None:
    """Write ``feed``'s lines for ``state``, timestamped, and the summary once it ended."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = feed.lines(state, now)
    if state.status is not RunStatus.RUNNING:
        lines.append(summary_line(state))
    for line in lines:
        out.write(f"{stamp} {line}\n")
    out.flush()


def follow_lines(
    root: Path,
    run_id: str,
    out: TextIO,
    *,
    sleep: Sleep = time.sleep,
    stale_after: float | None = None,
) -> ExitCode:
    """Print one timestamped line per change until the run ends; return its exit code."""
    feed = LineFeed()
    while True:
        current = _read(root, run_id, stale_after)
        write_lines(out, feed, current, time.monotonic())
        if current.status is not RunStatus.RUNNING:
            return ExitCode.for_run_status(run_outcome(current).value)
        sleep(POLL_SECONDS)


def progress_bars(
    out: TextIO, *, redirect_stdout: bool = False, redirect_stderr: bool = False
) -> Progress:
    """A rich ``Progress`` (not started) with the columns :class:`StepBars` fills (needs rich).

    Args:
        out: where the bars are drawn.
        redirect_stdout: print ``sys.stdout``'s text above the bars instead of through them
            (only when stdout is the same terminal: a redirected stdout stays a clean file).
        redirect_stderr: the same for ``sys.stderr`` (when the bars are drawn on it, as the
            engine's Ctrl-C lines and the script's warnings go there).
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[detail]}"),
    )
    return Progress(
        *columns,
        console=Console(file=out),
        transient=False,
        redirect_stdout=redirect_stdout,
        redirect_stderr=redirect_stderr,
    )


class StepBars:
    """One bar per step of the runs it is shown: done/total, failed, cancelled, ETA.

    Shown one run, a bar is labelled by its step; shown several (a script that starts more
    than one run), every bar also names its run by the short id, or the groups look alike.
    """

    def __init__(self, progress: Progress) -> None:
        """Bars drawn by ``progress`` (from :func:`progress_bars`, started by the caller)."""
        self._progress = progress
        self._tasks: dict[tuple[str, int], TaskID] = {}
        self._steps: dict[tuple[str, int], StepState] = {}
        self._runs: list[str] = []

    def show(self, state: RunState) -> None:
        """Bring the bars of ``state``'s steps up to date (adding those not seen yet)."""
        if state.run_id not in self._runs:
            self._runs.append(state.run_id)
            if len(self._runs) == 2:  # the first run's bars were labelled alone: name it now
                for key, task in self._tasks.items():
                    self._progress.update(task, description=self._label(key[0], self._steps[key]))
        for step in state.steps:
            stopped = [f"{n} {what}" for n, what in _stopped(step) if n]
            detail = " · ".join([step.status, *stopped])
            if step.cache == "step":
                detail += " (cache hit)"
            key = (state.run_id, step.number)
            self._steps[key] = step
            label = self._label(state.run_id, step)
            if key not in self._tasks:
                self._tasks[key] = self._progress.add_task(label, total=None, detail=detail)
            self._progress.update(
                self._tasks[key], total=step.total or None, completed=step.done, detail=detail
            )

    def _label(self, run_id: str, step: StepState) -> str:
        if len(self._runs) < 2:
            return f"{step.number:>2} {step.name[:24]:<24}"
        short = run_id.rsplit("_", 1)[-1]  # the random tail, as RunRow.short_id
        return f"{short} {step.number:>2} {step.name[:20]:<20}"


def follow_progress(root: Path, run_id: str, out: TextIO, *, sleep: Sleep = time.sleep) -> ExitCode:
    """Rich progress bars, one per step, until the run ends (needs rich)."""
    progress = progress_bars(out)
    bars = StepBars(progress)
    with progress:
        while True:
            current = _read(root, run_id, None)
            bars.show(current)
            if current.status is not RunStatus.RUNNING:
                break
            sleep(POLL_SECONDS)
    progress.console.print(summary_line(current))
    return ExitCode.for_run_status(run_outcome(current).value)


def _stopped(step: StepState) -> tuple[tuple[int, str], ...]:
    return ((step.failed, "failed"), (step.cancelled, "cancelled"))


def _read(root: Path, run_id: str, stale_after: float | None) -> RunState:
    if stale_after is None:
        return read_state(root, run_id)
    return read_state(root, run_id, stale_after=stale_after)
