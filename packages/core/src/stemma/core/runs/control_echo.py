"""Keeping the terminal from echoing ``^C`` into progress bars while they are drawn.

A terminal echoes a Ctrl-C as ``^C`` where its cursor is, which under rich's bars is the end
of the last bar: on a bar as wide as the terminal the echo wraps to a new line, rich's count of
the lines to redraw is one short, and a stale copy of the bars stays on the screen. Shells and
full-screen programs turn that echo off the same way (termios ``ECHOCTL``); it is put back on
the way out.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from contextlib import contextmanager, suppress
from typing import TextIO


@contextmanager
def no_control_echo(stream: TextIO | None = None) -> Generator[None]:
    """While inside, the terminal of ``stream`` (stdin) does not echo ``^C``; else nothing."""
    try:
        import termios
    except ImportError:  # not a POSIX terminal (Windows): nothing to turn off
        yield
        return
    given = stream or sys.stdin
    try:
        fd = given.fileno()
        saved = termios.tcgetattr(fd)
    except (AttributeError, OSError, ValueError, termios.error):  # not a terminal
        yield
        return
    quiet = list(saved)
    quiet[3] = saved[3] & ~termios.ECHOCTL  # lflag
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        # the terminal may be gone (the SSH connection closed): nothing to restore then
        with suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)
