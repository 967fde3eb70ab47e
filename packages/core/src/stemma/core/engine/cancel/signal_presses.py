"""Ctrl-C presses, counted one per signal the kernel delivers (docs/concepts/cancellation.md).

Python runs a signal's handler later, on the main thread, and only once for however many of
that signal arrived in between: three quick presses can reach a Python handler as one. The C
handler under it, though, writes one byte per delivery to the wakeup fd
(``signal.set_wakeup_fd``), so a thread that reads that pipe counts every press. The Python
handler is kept only so the C one stays installed; it does nothing, except raise
``KeyboardInterrupt`` once when a hard press asks for it (:meth:`SignalPresses.interrupt_main`).

In a Jupyter/IPython kernel the handlers stay the kernel's: SIGINT is its Interrupt button, and
it must keep raising ``KeyboardInterrupt`` in the cell. The deliveries are still watched (the
wakeup fd only observes), so each can cancel the run: the kernel may deliver the signal to any
of the run's threads, and a main thread asleep on the run wakes only once the run lets go.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

PRESS_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that count as a press."""

_CLOSED = 0  # no signal has number 0: the byte that stops the reader
# Set by a hard cancel; whichever of our handlers runs next raises (two runs in one process
# share the SIGINT handler: the latest to install holds it), and says so.
_RAISE_IN_MAIN = threading.Event()
_RAISED = threading.Event()
RAISE_WAIT = 1.0
"""Seconds :meth:`SignalPresses.interrupt_main` waits for the main thread to raise."""
_Handler = Callable[[int, FrameType | None], Any] | int | None
_watching: set[int] = set()  # the SignalPresses watching now (by id; changed on the main thread)


def presses_watched() -> bool:
    """Whether a run of this process watches the presses now (its handlers hold SIGINT)."""
    return bool(_watching)


def in_notebook_kernel() -> bool:
    """True inside a Jupyter/IPython kernel (not a plain IPython terminal)."""
    if "ipykernel" not in sys.modules:  # never import IPython just to ask
        return False
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    return getattr(shell, "kernel", None) is not None


class SignalPresses:
    """Calls ``on_press`` once for every SIGINT or SIGTERM delivered, on its own thread."""

    def __init__(self, on_press: Callable[[], None]) -> None:
        self._on_press = on_press
        self._previous_handlers: dict[int, _Handler] = {}
        self._previous_fd = -1
        self._pipe: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None

    @property
    def installed(self) -> bool:
        """Whether deliveries are watched now."""
        return self._pipe is not None

    @property
    def handlers_taken(self) -> bool:
        """Whether SIGINT and SIGTERM are ours (not in a notebook's kernel)."""
        return bool(self._previous_handlers)

    def install(self, *, take_handlers: bool = True) -> bool:
        """Watch SIGINT and SIGTERM deliveries; only possible on the main thread.

        Args:
            take_handlers: make the handlers ours (a script); False leaves them as they are (a
                notebook's kernel, whose handler raises ``KeyboardInterrupt``), and only the
                deliveries that reach a Python-level handler are seen.

        Returns:
            Whether the deliveries are watched (off the main thread: False).
        """
        if self._pipe is not None:
            return True
        if threading.current_thread() is not threading.main_thread():
            return False
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)  # the C handler must never block
        # The wakeup fd before the handlers: a press between the two is then counted, not lost.
        self._previous_fd = signal.set_wakeup_fd(write_end)
        self._pipe = (read_end, write_end)
        if take_handlers:
            for signum in PRESS_SIGNALS:
                self._previous_handlers[signum] = signal.signal(signum, self._on_signal)
        self._thread = threading.Thread(target=self._read, name="stemma-presses", daemon=True)
        self._thread.start()
        _watching.add(id(self))
        return True

    def restore(self) -> None:
        """Put back the previous handlers and wakeup fd; presses already delivered still count.

        Only the main thread can; elsewhere the presses keep coming here.
        """
        if self._pipe is None or threading.current_thread() is not threading.main_thread():
            return
        for signum, handler in self._previous_handlers.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        self._previous_handlers.clear()
        signal.set_wakeup_fd(self._previous_fd)
        _watching.discard(id(self))
        (read_end, write_end), self._pipe = self._pipe, None
        os.write(write_end, bytes([_CLOSED]))  # after every byte a press wrote
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=10)  # a hard press being applied: its kill ends soon
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)

    def interrupt_main(self) -> None:
        """Raise ``KeyboardInterrupt`` in the main thread, and wait (briefly) until it has.

        A real SIGINT to the main thread, because a thread blocked on a lock wakes only for a
        signal. With our handler in place it raises once; with the handlers restored, the
        previous one decides (Python's default raises ``KeyboardInterrupt`` too), and the wait
        runs out after :data:`RAISE_WAIT` seconds.
        """
        main = threading.main_thread()
        if not main.is_alive() or main.ident is None:  # the interpreter is already ending
            return
        _RAISED.clear()
        _RAISE_IN_MAIN.set()
        signal.pthread_kill(main.ident, signal.SIGINT)
        if threading.current_thread() is not main:
            _RAISED.wait(RAISE_WAIT)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        del signum, frame  # counted by _read, from the wakeup fd
        if _RAISE_IN_MAIN.is_set():
            _RAISE_IN_MAIN.clear()
            _RAISED.set()
            raise KeyboardInterrupt

    def _read(self) -> None:
        pipe = self._pipe
        if pipe is None:
            return
        read_end, _ = pipe
        previous = self._previous_fd
        while True:
            try:
                received = os.read(read_end, 64)
            except OSError:
                return
            if not received:  # both ends closed
                return
            for signum in received:
                if signum == _CLOSED:
                    return
                if signum in PRESS_SIGNALS:
                    self._on_press()
                elif previous >= 0:  # someone else's signal (asyncio's): pass it on
                    with contextlib.suppress(OSError):
                        os.write(previous, bytes([signum]))
