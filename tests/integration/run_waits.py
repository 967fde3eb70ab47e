"""Waiting for a run's live state to reach a point (the cancellation tests press then)."""

from __future__ import annotations

import pathlib
import time
from collections.abc import Callable
from typing import TypeVar

from stemma.core.live import RunState, list_states

_T = TypeVar("_T")


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
    found = wait_for(
        lambda: next((state for state in list_states(root) if ready(state)), None), timeout, what
    )
    return found


def wait_for(found: Callable[[], _T | None], timeout: float, what: str) -> _T:
    """What ``found`` returns once it is not None (nor empty), polled every 50 ms.

    Raises:
        AssertionError: it was not within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := found():
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what} never reached the awaited state")
