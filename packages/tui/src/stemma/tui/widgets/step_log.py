"""The step screen's log view: one execution's log, or a running step's live worker logs.

``follow`` starts a thread worker that polls the step's live log files twice a second and
posts what they gained; the view writes whole lines under a header naming each file and
scrolls to the end as they grow. Reading goes through the app's headless client.

A header is shortened to the view's width when it is written, so text that comes while the
view has no width (its tab not shown yet, or another tab in front) waits until it has one:
a header fitted to a guess was cut by the view's scrollbar at 80 columns.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.widgets import Log

from stemma.tui.client import ExecutionRow
from stemma.tui.client.log_follow import LogChunk, followed_title
from stemma.tui.messages import LoadFailed, LogGrew, LogLoaded

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp

FOLLOW_SECONDS = 0.5
WAITING = "no output yet — waiting for the workers' logs"
"""Said under the header until a followed file gains its first line (else only a header)."""


class StepLog(Log):
    """A :class:`Log` that shows an execution's log or follows a running step's."""

    def __init__(self, run_id: str, number: int, *, id: str | None = None) -> None:
        super().__init__(id=id, highlight=False)
        self.run_id = run_id
        self.number = number
        self.following = False
        self._stop = threading.Event()
        self._followed: Path | None = None
        """The file whose text the view shows last (a header goes before another's)."""
        self._waiting: list[LogChunk] = []
        """Followed text that came while the view had no width to fit its headers to."""

    @property
    def stemma(self) -> StemmaApp:
        """The app, typed."""
        return cast("StemmaApp", self.app)

    def follow(self) -> None:
        """Follow the step's live worker logs, or stop following them."""
        if self.following:
            self.stop_following()
            self.write_line("── stopped following")
            return
        self.following = True
        self._stop = threading.Event()
        self._followed = None
        self._waiting = []
        self.clear()
        self.write_lines(self._follow_header())
        self._poll(self._stop)

    def stop_following(self) -> None:
        """Stop the follow worker (its thread ends within a poll)."""
        self._stop.set()
        self.following = False
        self._waiting = []

    def _follow_header(self) -> list[str]:
        return [f"── following the live worker logs of step {self.number} (f stops)", WAITING]

    @work(thread=True, exclusive=True, group="follow", exit_on_error=False)
    def _poll(self, stop: threading.Event) -> None:
        try:
            follower = self.stemma.client.log_follower(self.run_id, self.number)
        except LookupError as err:
            self.post_message(LoadFailed("follow", str(err)))
            return
        while not stop.is_set():
            if chunks := follower.poll():
                self.post_message(LogGrew(chunks))
            stop.wait(FOLLOW_SECONDS)

    @on(LoadFailed)
    def _not_following(self, message: LoadFailed) -> None:
        message.stop()  # the view says it: not the screen's facts line, not a toast
        self.following = False
        self.write_line(f"── not following: {message.error}")

    @on(LogGrew)
    def _grew(self, message: LogGrew) -> None:
        message.stop()
        if not self.following:
            return  # stopped while this was on its way
        self._waiting.extend(message.chunks)
        self._write_waiting()

    def on_resize(self) -> None:
        """Write the followed text that waited for the view to have a width."""
        self._write_waiting()

    def _write_waiting(self) -> None:
        width = self.scrollable_content_region.width
        if not width or not self._waiting:
            return  # not laid out (its tab hidden): wait for on_resize
        chunks, self._waiting = self._waiting, []
        if self._followed is None:  # the first output: the waiting line goes
            self.clear()
            self.write_line(self._follow_header()[0])
        for chunk in chunks:
            if chunk.path != self._followed:
                self.write_line(followed_title(chunk.path, self.stemma.client.root, width))
                self._followed = chunk.path
            # Whole lines, never Log.write: it appends to the last line, the header above,
            # whose cached rendering then hid the text (or showed it glued to the header).
            self.write_lines(chunk.text.splitlines())  # scrolls to the end: auto_scroll

    def show_execution(self, execution: ExecutionRow) -> None:
        """Stop following and show one execution's log (read in a worker)."""
        self.stop_following()
        self._load(execution)

    @work(thread=True, exclusive=True, group="log", exit_on_error=False)
    def _load(self, execution: ExecutionRow) -> None:
        if execution.stage == "running":
            text = "running now: f follows the step's live worker logs"
            title = f"execution {execution.execution_run_id[:8]}"
        elif execution.failure_log is not None:
            text = self.stemma.client.read_log(execution.failure_log)
            title = str(execution.failure_log)
        else:
            text = execution.worker_log or execution.error or "(this execution logged nothing)"
            title = f"worker output of {execution.execution_run_id[:8]}"
        self.post_message(LogLoaded(title, text))

    @on(LogLoaded)
    def _loaded(self, message: LogLoaded) -> None:
        message.stop()
        self.clear()
        self.write_line(f"── {message.title}")
        self.write_lines(message.text.splitlines())

    def on_unmount(self) -> None:
        """Stop following: the worker's thread ends within a poll."""
        self._stop.set()
