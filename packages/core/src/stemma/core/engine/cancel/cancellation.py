"""Three presses of escalating force (docs/concepts/cancellation.md), from wherever they come.

Ctrl-C / SIGINT / SIGTERM in the orchestrator (each delivered signal is one press: see
:mod:`~stemma.core.engine.cancel.signal_presses`), ``Pipeline.cancel(level)`` from Python, and a
control request from another process (``stemma cancel``, the dashboard) all end in
:meth:`Canceller.request`, which prints one line saying what it did and what the next press does.

The hard level kills every worker and job, then raises ``KeyboardInterrupt`` in the main thread
so the script's ``finally`` blocks and context managers run; a process still alive
:data:`HARD_EXIT_AFTER` seconds later exits with :data:`HARD_EXIT_CODE`, and one still alive
:data:`HARD_BACKSTOP` seconds after the press does, whatever it hangs in. In a notebook's kernel
the kernel is never ended: its Interrupt button raises ``KeyboardInterrupt`` in the cell, and the
run is cancelled at force (:meth:`Canceller.interrupted`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from stemma.core.cancel_levels import CancelLevel
from stemma.core.engine.cancel.signal_presses import SignalPresses, in_notebook_kernel
from stemma.core.engine.run_context import RunContext
from stemma.core.live.control import pending_requests
from stemma.core.live.state import write_state

HARD_EXIT_CODE = 130
"""The exit code of a hard cancel (level 3) whose process outlived its ``KeyboardInterrupt``."""
HARD_EXIT_AFTER = 5.0
"""Seconds a hard cancel gives ``finally`` blocks before the process exits on its own."""
HARD_CLOSE_WAIT = 10.0
"""Seconds a hard cancel, its work already killed, waits for a commit under way to finish so
that every stopped step gets its final event (2 s before the kill, this much after it)."""
HARD_BACKSTOP = 20.0
"""Seconds after a hard press by which the process has exited, whatever hangs: the kill, the
final writes, or the interpreter's own exit joining a thread that never ends (a process pool's
manager after its workers were killed; seen in CI on a loaded machine)."""

# Where a cancel came from: the line it prints says how to go further from there.
_FROM_SIGNAL = "signal"
_FROM_CONTROL = "control"
_FROM_PYTHON = "python"


class Canceller:
    """Applies cancellation levels to one pipeline run; never lowers a level."""

    def __init__(
        self,
        ctx: RunContext,
        *,
        out: TextIO | None = None,
        hard_exit: Callable[[int], None] = os._exit,
        signals: SignalPresses | None = None,
    ) -> None:
        """Cancel ``ctx``'s run.

        Args:
            ctx: the run.
            out: where the lines go (stderr by default).
            hard_exit: how a lingering process exits after a hard cancel.
            signals: the deliveries watched since the run's opening, whose presses this
                canceller is handed (``OpeningPresses.hand_over``); None watches its own from
                the first step.
        """
        self._ctx = ctx
        self._out = out
        self._hard_exit = hard_exit
        self._lock = threading.Lock()
        self._kernel = in_notebook_kernel()
        self._signals = signals if signals is not None else SignalPresses(self.press)

    @property
    def level(self) -> int:
        """The highest level applied so far (0: none)."""
        return self._ctx.cancel_level

    def request(self, level: int | str | CancelLevel) -> None:
        """Apply ``level`` now (and every lower level not yet applied); idempotent.

        This is ``Pipeline.cancel`` from Python: the line printed says so.
        """
        self._apply(lambda current: CancelLevel.parse(level), _FROM_PYTHON)

    def requested_elsewhere(self, level: int | str | CancelLevel) -> None:
        """Apply ``level`` asked for through the run's control files, by another process.

        ``stemma cancel`` and the dashboard ask that way; the line printed names who asked (as
        recorded in the request) and how to go further from there, not Ctrl-C: whoever reads
        a detached run's log has no terminal to press it in.
        """
        self._apply(lambda current: CancelLevel.parse(level), _FROM_CONTROL)

    def press(self) -> None:
        """One more press: the next level up; never raises, so the next press still works.

        In a notebook's kernel a press is its Interrupt button: a force cancel, never more.
        """
        try:
            self._apply(self._next_level, _FROM_SIGNAL)
        except Exception as error:
            with contextlib.suppress(OSError, ValueError):
                print(f"stemma: cancelling failed: {error}", file=self._out or sys.stderr)

    def interrupted(self) -> bool:
        """A ``KeyboardInterrupt`` reached a wait on this run: cancel the run at force.

        That is a notebook's Interrupt button (no signal handler of ours there), or any other
        interrupt of a wait. After a hard cancel nothing is done: its ``KeyboardInterrupt`` is
        ending the process, and nothing may wait for the run.

        Returns:
            Whether the run was cancelled here (False after a hard cancel).
        """
        if self.level >= CancelLevel.HARD:
            return False
        self._apply(lambda current: CancelLevel.FORCE, _FROM_SIGNAL)
        return True

    def _apply(self, choose: Callable[[int], CancelLevel], source: str) -> None:
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
        self._say(target, source)
        if target is CancelLevel.HARD:
            self._hard()
        elif target is CancelLevel.FORCE:
            threading.Thread(
                target=self._ctx.cancel_workers,
                args=(CancelLevel.FORCE,),
                name="stemma-force-cancel",
                daemon=True,
            ).start()

    def _hard(self) -> None:
        """Kill everything, write the final state, then interrupt the main thread.

        Commits are held back until the ``KeyboardInterrupt`` has been raised: the kill settles
        every unit at once, and a step committing its cancelled units would otherwise let the
        script's wait return first, so the interrupt would land in whatever runs next, its
        ``finally`` block included, and cut that short.
        """
        if not self._kernel:  # started first: nothing below can keep the process alive
            self._exit_after(HARD_BACKSTOP)
        lock = self._ctx.commit_lock
        held = lock.acquire(timeout=2)  # a commit under way finishes first; never wait longer
        try:
            self._ctx.cancel_workers(CancelLevel.HARD)
            final = self._ctx.monitor.snapshot(final=True)
            write_state(self._ctx.store.layout.root, final)
            if not held:  # a commit still under way (a loaded machine): the work is killed
                # now; its steps' final events wait for it a little longer, or none is written
                held = lock.acquire(timeout=HARD_CLOSE_WAIT)
            if held:  # the deferred events (cache hits), and a final event per stopped step
                with contextlib.suppress(Exception):  # best effort: the process ends anyway
                    self._ctx.close_cancelled({step.number: step for step in final.steps})
        finally:
            try:
                self._end_process()
            finally:
                if held:
                    lock.release()

    def _end_process(self) -> None:
        """``KeyboardInterrupt`` in the main thread, and the exit if the process lingers.

        A notebook's kernel is never ended: everything of the run is killed, and the kernel
        lives on.
        """
        if self._kernel:
            return
        self._exit_after(HARD_EXIT_AFTER)
        self._signals.interrupt_main()

    def _exit_after(self, seconds: float) -> None:
        """Exit with :data:`HARD_EXIT_CODE` in ``seconds`` unless the process has ended."""
        threading.Thread(
            target=self._exit_later, args=(seconds,), name="stemma-hard-exit", daemon=True
        ).start()

    def _exit_later(self, seconds: float) -> None:
        threading.Event().wait(seconds)  # a daemon thread: a process that ended is gone
        with contextlib.suppress(OSError, ValueError):
            print(
                f"stemma: run {self._ctx.run_id} was cancelled hard {seconds:g} s ago "
                f"and the process is still running; exiting with {HARD_EXIT_CODE}",
                file=self._out or sys.stderr,
                flush=True,
            )
        self._hard_exit(HARD_EXIT_CODE)

    def _next_level(self, current: int) -> CancelLevel:
        if self._kernel:
            return CancelLevel.FORCE
        return CancelLevel(min(current + 1, CancelLevel.HARD))

    def install_signal_handlers(self) -> bool:
        """Count SIGINT and SIGTERM as presses; only possible on the main thread.

        In a notebook's kernel the handlers stay the kernel's (its Interrupt button raises
        ``KeyboardInterrupt`` in the cell) and each interrupt cancels the run at force. Off the
        main thread (a server), use ``Pipeline.cancel`` instead.

        Returns:
            Whether SIGINT and SIGTERM are now ours.
        """
        return self._signals.install(take_handlers=not self._kernel) and not self._kernel

    def restore_signal_handlers(self) -> None:
        """Put back the handlers that were there before (from the main thread)."""
        self._signals.restore()

    def close(self) -> None:
        """Restore the handlers, after applying the presses that arrived meanwhile.

        A press that landed while the run was ending still counts: three presses end in a hard
        cancel even if the run finished between the second and the third.
        """
        self._signals.restore()

    def _say(self, level: CancelLevel, source: str) -> None:
        out = self._out or sys.stderr
        # A closed terminal must not stop the cancellation.
        with contextlib.suppress(OSError, ValueError):
            print(
                f"stemma: cancelling run {self._ctx.run_id} — {level.describe()}."
                f"{self._where_from(level, source)}",
                file=out,
                flush=True,
            )

    def _where_from(self, level: CancelLevel, source: str) -> str:
        """Where the cancel came from, and how to go one level further from there."""
        run_id = self._ctx.run_id
        upcoming = CancelLevel(level + 1) if level < CancelLevel.HARD else None
        if source == _FROM_SIGNAL:
            if upcoming is None or not self._signals.handlers_taken:
                return ""
            return f" Press Ctrl-C again for {upcoming.describe()}."
        if source == _FROM_CONTROL:
            said = f" Asked by {self._requester(level)} (`stemma cancel` or the dashboard)."
            if upcoming is None:
                return said
            return (
                f"{said} For {upcoming.name.lower()}: `stemma cancel {run_id} --level "
                f"{int(upcoming)}`, or c again in the dashboard."
            )
        said = " Asked from Python (Pipeline.cancel)."
        if upcoming is None:
            return said
        return f"{said} For {upcoming.name.lower()}: Pipeline.cancel({int(upcoming)})."

    def _requester(self, level: CancelLevel) -> str:
        """``user@host (pid N)`` of the newest request at ``level``, as it recorded itself."""
        asked = "another process"
        with contextlib.suppress(OSError, ValueError):  # the record is only for the words
            for request in pending_requests(self._ctx.store.layout.root, self._ctx.run_id):
                if request.level == level:
                    asked = request.requested_by
        return asked


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
