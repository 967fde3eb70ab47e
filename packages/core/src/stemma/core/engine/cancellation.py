"""Three presses of escalating force (docs/concepts/cancellation.md), from wherever they come.

Ctrl-C / SIGINT / SIGTERM in the orchestrator, ``Pipeline.cancel(level)`` from Python, and a
control request from another process (``stemma cancel``, the dashboard) all end in
:meth:`Canceller.request`. A signal handler only drops the level into a queue (``SimpleQueue.put``
is safe in a handler: the main thread may be holding any lock when the signal lands); a
dedicated thread applies it and prints one line saying what it did and what the next press does.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any, TextIO

from stemma.core.cancel_levels import CancelLevel
from stemma.core.engine.run_context import PipelineContext
from stemma.core.live.state import write_state

HARD_EXIT_CODE = 130
"""The exit code of a hard cancel (level 3): the shell's code for an interrupted process."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_Handler = Callable[[int, FrameType | None], Any] | int | None


class Canceller:
    """Applies cancellation levels to one pipeline run; never lowers a level."""

    def __init__(
        self,
        ctx: PipelineContext,
        *,
        out: TextIO | None = None,
        hard_exit: Callable[[int], None] = os._exit,
    ) -> None:
        self._ctx = ctx
        self._out = out
        self._hard_exit = hard_exit
        self._lock = threading.Lock()
        self._presses: queue.SimpleQueue[CancelLevel | None] = queue.SimpleQueue()
        self._previous: dict[int, _Handler] = {}
        self._thread: threading.Thread | None = None

    @property
    def level(self) -> int:
        """The highest level applied so far (0: none)."""
        return self._ctx.cancel_level

    def request(self, level: int | str | CancelLevel) -> None:
        """Apply ``level`` now (and every lower level not yet applied); idempotent."""
        self._apply(lambda current: CancelLevel.parse(level))

    def press(self) -> None:
        """One more press: the next level up (safe to call from a signal handler)."""
        self._presses.put(None)

    def _apply(self, choose: Callable[[int], CancelLevel]) -> None:
        """Raise the level to ``choose(current)``; the choice and the raise are one step.

        Returns at once: a force cancel's SIGTERM-then-SIGKILL runs on its own thread, so a
        third press is applied while the second is still waiting for workers to stop.
        """
        with self._lock:
            target = choose(self._ctx.cancel_level)
            if target <= self._ctx.cancel_level:
                return
            self._ctx.cancel_level = int(target)
        self._ctx.cancelled.set()
        self._ctx.monitor.cancel_level(int(target))
        self._say(target)
        if target is CancelLevel.HARD:
            try:
                self._ctx.backend.cancel(CancelLevel.HARD)
                write_state(self._ctx.store.layout.root, self._ctx.monitor.snapshot(final=True))
                with contextlib.suppress(Exception):  # best effort: cache-hit events not written
                    if self._ctx.commit_lock.acquire(timeout=2):
                        self._ctx.store.record_events(self._ctx.deferred_events)
            finally:
                self._hard_exit(HARD_EXIT_CODE)
        elif target is CancelLevel.FORCE:
            threading.Thread(
                target=self._ctx.backend.cancel,
                args=(CancelLevel.FORCE,),
                name="stemma-force-cancel",
                daemon=True,
            ).start()

    def _next_level(self, current: int) -> CancelLevel:
        return CancelLevel(min(current + 1, CancelLevel.HARD))

    def install_signal_handlers(self) -> bool:
        """Route SIGINT and SIGTERM here; only possible on the main thread (else: False).

        Off the main thread (a notebook's worker, a server), use ``Pipeline.cancel`` instead.
        """
        if threading.current_thread() is not threading.main_thread() or self._previous:
            return bool(self._previous)
        self._start_thread()
        for signum in _SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        return True

    def restore_signal_handlers(self) -> None:
        """Put back the handlers that were there before (from the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum, handler in self._previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        self._previous.clear()

    def close(self) -> None:
        """Restore the handlers, apply the presses that arrived meanwhile, stop the thread.

        A press that landed while the run was ending still counts: three presses end in a hard
        exit even if the run finished between the second and the third.
        """
        self.restore_signal_handlers()
        thread, self._thread = self._thread, None
        if thread is not None:
            self._presses.put(CancelLevel.GRACEFUL)  # wakes it; it stops at this item
            thread.join(timeout=5)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        del signum, frame
        self._presses.put(None)

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._apply_presses, name="stemma-cancel", daemon=True
            )
            self._thread.start()

    def _apply_presses(self) -> None:
        while self._presses.get() is None:  # a press; any other item means closed
            try:
                self._apply(self._next_level)
            except Exception as error:  # the next press must still work
                with contextlib.suppress(OSError, ValueError):
                    print(f"stemma: cancelling failed: {error}", file=self._out or sys.stderr)

    def _say(self, level: CancelLevel) -> None:
        out = self._out or sys.stderr
        upcoming = (
            f" Press Ctrl-C again for {CancelLevel(level + 1).describe()}."
            if level < CancelLevel.HARD
            else ""
        )
        # A closed terminal must not stop the cancellation.
        with contextlib.suppress(OSError, ValueError):
            print(
                f"stemma: cancelling run {self._ctx.run_id} — {level.describe()}.{upcoming}",
                file=out,
                flush=True,
            )


def print_cancel_summary(summary: Mapping[str, Any], level: int) -> None:
    """One line on stderr at the end of a cancelled run: what happened, and how to finish."""
    counts: dict[str, int] = {}
    for row in summary["steps"]:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    described = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(
        f"stemma: run {summary['pipeline_run_id']} cancelled ({CancelLevel(level).name.lower()})"
        f": {described or 'no steps'}. Run it again to redo only the cancelled and skipped "
        "steps; finished work is cached.",
        file=sys.stderr,
        flush=True,
    )
