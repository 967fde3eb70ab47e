"""The progress of the runs an attached ``stemma run`` starts, shown while its script works.

A thread reads the live state of each run this process opened (the orchestrator writes it about
once a second) and shows it on stderr, as ``stemma watch`` would: bars on a terminal, plain
lines in a batch log. The script's own stdout is left alone: on a terminal its prints appear
above the bars; redirected, it stays a clean file.
"""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from stemma.core.engine import StartedRun, runs_started_here
from stemma.core.live import RunState, RunStatus, read_state
from stemma.core.runs.control_echo import no_control_echo
from stemma.core.runs.watch_lines import LineFeed, summary_line
from stemma.core.runs.watching import POLL_SECONDS, StepBars, progress_bars, write_lines

if TYPE_CHECKING:
    from rich.progress import Progress

COUNT_EVERY_SECONDS = 10.0
"""Between two count-only lines of a step in a batch log: statuses are told at once."""


class AttachedProgress:
    """Shows the runs this process starts until the ``with`` block ends.

    Args:
        out: where progress goes (stderr).
        bars: rich bars (``out`` is a terminal and rich is installed) rather than lines.
        redirect_stdout: with bars, print the script's stdout above them (stdout is the same
            terminal).
        redirect_stderr: with bars, print what is written to ``sys.stderr`` above them (the
            bars are on stderr): the engine's "Press Ctrl-C again" lines, the script's
            warnings. Written straight to the terminal, they would land inside the bars and
            leave them drawn twice.
        count_every: seconds between count-only lines of a step.
        poll: seconds between reads of the state files.
    """

    def __init__(
        self,
        out: TextIO,
        *,
        bars: bool,
        redirect_stdout: bool = False,
        redirect_stderr: bool = False,
        count_every: float = COUNT_EVERY_SECONDS,
        poll: float = POLL_SECONDS,
    ) -> None:
        self._out = out
        self._poll_seconds = poll
        self._count_every = count_every
        self._known = len(runs_started_here())  # runs opened before the script are not its own
        self._following: dict[StartedRun, LineFeed] = {}
        self._ended: set[StartedRun] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="stemma-run-progress", daemon=True)
        self._progress: Progress | None = None
        self._bars: StepBars | None = None
        self._echo = ExitStack()
        if bars:
            self._progress = progress_bars(
                out, redirect_stdout=redirect_stdout, redirect_stderr=redirect_stderr
            )
            self._bars = StepBars(self._progress)

    def __enter__(self) -> AttachedProgress:
        if self._progress is not None:
            self._echo.enter_context(no_control_echo())
            self._progress.start()
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._show_all()  # the ends the last poll missed
        if self._progress is not None:
            self._progress.stop()
        self._echo.close()

    def _loop(self) -> None:
        while not self._stop.wait(self._poll_seconds):
            self._show_all()

    def _show_all(self) -> None:
        for run in runs_started_here()[self._known :]:
            if run in self._ended:
                continue
            try:
                state = read_state(run.root, run.run_id)
            except (OSError, ValueError):
                continue  # not written yet, or being replaced: the next poll reads it
            self._show(run, state)
            if state.status is not RunStatus.RUNNING:
                self._ended.add(run)

    def _show(self, run: StartedRun, state: RunState) -> None:
        if self._bars is not None and self._progress is not None:
            self._bars.show(state)
            if state.status is not RunStatus.RUNNING:
                self._progress.console.print(summary_line(state))
            return
        feed = self._following.setdefault(run, LineFeed(self._count_every))
        write_lines(self._out, feed, state, time.monotonic())
