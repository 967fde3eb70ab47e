"""Ctrl-C while a run opens: watched from its first moment, the run's own once it is listed.

A run's opening (its backend and first worker, its store and the store's recovery, its
context) takes a fraction of a second, or minutes when a large recovery is due. The presses are
watched from the opening's first moment (:func:`watched_opening`), before anything of the run
is started or visible, so that no press in that window reaches the script as a bare
``KeyboardInterrupt`` (a traceback, and a run left ``running`` until it is reaped):

- Before the run is listed, a press stops the opening at its next step: what it started (the
  first worker) is stopped, nothing of the run is recorded, and the script exits plainly with
  code 130 (:class:`~stemma.core.errors.OpeningInterrupted`: a ``SystemExit``, no traceback).
  A second press stops it at once, as the hard level does: a ``KeyboardInterrupt`` in the
  main thread, made the same plain exit as it leaves the opening, and an exit with 130 if the
  process is still alive :data:`~stemma.core.engine.cancel.cancellation.HARD_EXIT_AFTER`
  seconds later.
- From the moment its run is listed (:meth:`OpeningPresses.hand_over`, just before the run's
  state file is first written) every press is the run's canceller's: the three presses.

In a notebook's kernel nothing is taken here: its Interrupt button raises ``KeyboardInterrupt``
in the cell, which stops an opening as it stops any code; the run watches the deliveries from
its first step. Nor while another run of the process holds the presses (they stay its own
until this run's first step), and off the main thread nothing can be installed, as for a run.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Generator

from stemma.core.engine.cancel.pause_points import pause_point
from stemma.core.engine.cancel.signal_presses import (
    SignalPresses,
    in_notebook_kernel,
    presses_watched,
)
from stemma.core.errors import OpeningInterrupted

_STOP_AT_ONCE = 2
"""The press, before the run is listed, that stops the opening at once."""


class OpeningPresses:
    """The presses of one run's opening; :meth:`hand_over` gives them to the run."""

    def __init__(self, *, hard_exit: Callable[[int], None] = os._exit) -> None:
        self._lock = threading.Lock()
        self._pressed = 0
        self._run_press: Callable[[], None] | None = None
        self._hard_exit = hard_exit
        self.signals = SignalPresses(self._press)
        """The deliveries watched; the run's canceller keeps them (and restores them)."""

    @property
    def handed_over(self) -> bool:
        """Whether the run is listed and its canceller has the presses."""
        return self._run_press is not None

    @property
    def pressed(self) -> bool:
        """Whether a press reached the opening before the run was listed."""
        return self._pressed > 0

    def install(self) -> None:
        """Watch SIGINT and SIGTERM now (the main thread of a script; else nothing).

        Nothing either while another run of this process watches them (a ``run()`` called
        beside a ``Pipeline`` run): a press then stays that run's, as before this one opened,
        and this run takes the presses from its first step.
        """
        if not in_notebook_kernel() and not presses_watched():
            self.signals.install()

    def reached(self, moment: str) -> None:
        """The opening reached ``moment`` (a pause point's name): stop here if pressed.

        Raises:
            OpeningInterrupted: a press landed before the run was listed.
        """
        pause_point(moment)
        if self._pressed and self._run_press is None:
            raise OpeningInterrupted

    def hand_over(self, run_press: Callable[[], None]) -> None:
        """The run is about to be listed: every later press is ``run_press`` (its canceller's).

        Checked and switched under one lock: a press is either the opening's (and the run is
        never listed) or the run's.

        Raises:
            OpeningInterrupted: a press landed before: the run must not be listed.
        """
        with self._lock:
            if self._pressed:
                raise OpeningInterrupted
            self._run_press = run_press

    def close(self, error: BaseException | None) -> None:
        """The opening ended without a listed run (an error, or nothing to run).

        Restores the handlers (from the main thread). A press that landed meanwhile still
        stops the script: :class:`OpeningInterrupted` is raised, from ``error`` when that is the
        second press's ``KeyboardInterrupt`` (or no error at all); any other error goes on.

        Raises:
            OpeningInterrupted: a press landed before the run was listed.
        """
        if self.handed_over:
            return
        self.signals.restore()
        if not self._pressed:
            return
        if error is None or isinstance(error, KeyboardInterrupt):
            raise OpeningInterrupted from None

    def _press(self) -> None:
        """One delivery; on the reader thread of :class:`SignalPresses`, never raises."""
        with self._lock:
            run_press = self._run_press
            if run_press is None:
                self._pressed += 1
            pressed = self._pressed
        if run_press is not None:
            run_press()
            return
        try:
            if pressed == 1:
                self._say(
                    "interrupted while a run was opening: it stops before anything of it runs "
                    "or is listed. Press Ctrl-C again to stop at once."
                )
            elif pressed == _STOP_AT_ONCE:
                self._say("interrupted again: stopping at once.")
                threading.Thread(
                    target=self._exit_later, name="stemma-hard-exit", daemon=True
                ).start()
                self.signals.interrupt_main()
            # Later presses (the interrupt's own SIGINT among them) change nothing.
        except Exception as error:
            self._say(f"stopping the opening failed: {error}")

    def _exit_later(self) -> None:
        # (imported here: the opening starts before the engine is loaded)
        from stemma.core.engine.cancel.cancellation import HARD_EXIT_AFTER, HARD_EXIT_CODE

        threading.Event().wait(HARD_EXIT_AFTER)  # a daemon thread: a process that ended is gone
        self._say(
            f"still running {HARD_EXIT_AFTER:g} s after the second press; exiting with "
            f"{HARD_EXIT_CODE}"
        )
        self._hard_exit(HARD_EXIT_CODE)

    @staticmethod
    def _say(text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed terminal stops nothing
            print(f"stemma: {text}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def watched_opening() -> Generator[OpeningPresses]:
    """Watch the presses while the body opens a run; the run takes them over once listed.

    The body calls :meth:`OpeningPresses.reached` at each step of the opening and hands the
    presses to the run's :class:`~stemma.core.engine.engine_run.EngineRun` (``opening=``).
    Leaving without a listed run restores the handlers; a press that landed before the run
    was listed ends the script plainly (:class:`~stemma.core.errors.OpeningInterrupted`).
    """
    opening = OpeningPresses()
    opening.install()
    try:
        opening.reached("opening.presses")  # watched; nothing of the run opened yet
        yield opening
    except BaseException as error:
        opening.close(error)
        raise
    opening.close(None)
