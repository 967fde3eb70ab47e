"""The element's own time-limit warning, for when the scheduler's does not come in time.

SLURM sends a job its warning (``--signal=USR2@30``) from the controller's periodic check of
time limits; a controller slow to run that check, or a signal lost on its way to the node, lets
a job reach its limit unwarned. The hard kill then takes the whole pack, the units that had
finished included, since nothing of it was staged. So an array element also keeps time itself
(:func:`arm`): ``signal_delay_s`` before its limit, counted from its own process's start (a
second or so after the job's), it sends itself the same signal, and the same handler stops the
pack, unless the scheduler's warning came first (:func:`note_warning`), as it nearly always does.
Either way the element's log says which.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

_received = threading.Event()
"""Set once a warning (the scheduler's, or this module's) has reached the element."""


def note_warning() -> None:
    """Record that the warning came (called by the element's signal handler)."""
    _received.set()


def arm(time_limit_s: float, signal_delay_s: float) -> threading.Timer:
    """Send this process ``SIGUSR2`` ``signal_delay_s`` before ``time_limit_s``, if none came.

    Args:
        time_limit_s: the job's time limit, in seconds from its start.
        signal_delay_s: how long before the limit the scheduler was asked to warn.

    Returns:
        The timer (a daemon thread: it never holds the element's exit).
    """
    due = max(0.0, time_limit_s - signal_delay_s - seconds_running())
    timer = threading.Timer(due, _warn_self, args=(signal_delay_s,))
    timer.daemon = True
    timer.name = "stemma-own-warning"
    timer.start()
    return timer


def _warn_self(signal_delay_s: float) -> None:
    if _received.is_set():
        return
    print(
        f"stemma: no time-limit warning from SLURM {signal_delay_s:g} s before the limit; the "
        "element warns itself",
        file=sys.stderr,
        flush=True,
    )
    os.kill(os.getpid(), signal.SIGUSR2)


def seconds_running() -> float:
    """How long this process has run, from the kernel's record of its start (0 if unknown)."""
    try:
        # Field 22 (starttime, in clock ticks since boot) is the 20th after the command's ')'.
        after_name = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started = int(after_name[19]) / os.sysconf("SC_CLK_TCK")
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, uptime - started)
