"""Waiting for a run's live state to reach a point (the cancellation tests press then)."""

from __future__ import annotations

import pathlib
import time
from collections.abc import Callable

from stemma.core.live import RunState, list_states


def wait_for_run(
    root: pathlib.Path,
    ready: Callable[[RunState], bool],
    timeout: float = 120,
    *,
    what: str = "the run",
) -> RunState:
    """The first run of ``root`` whose state is ``ready``, polled every 50 ms.

    Raises:
        AssertionError: none was within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for state in list_states(root):
            if ready(state):
                return state
        time.sleep(0.05)
    raise AssertionError(f"{what} never reached the awaited state")
