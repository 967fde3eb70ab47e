"""Pause points: named moments a test can hold a process at, to act on it exactly there.

Crash points (:mod:`stemma.core.crash_points`) follow durable writes; a pause point marks a
moment of a sequence that writes nothing, such as the steps of a run's opening, so that a test
can press Ctrl-C at each of them instead of at whatever moment a timer hits. Unarmed, the call
is one test of a module constant read at import. Armed by environment variables (inherited by
the run's workers, which reach none of these points):

``STEMMA_PAUSE_AT=NAME``
    the first time this process reaches ``NAME``, it writes ``NAME.reached`` (its pid) into
    ``$STEMMA_PAUSE_DIR`` and waits until a file ``NAME.go`` appears there, then goes on (after
    :data:`PAUSE_LIMIT` seconds it goes on anyway: a harness that died never hangs a run).
``STEMMA_PAUSE_DIR=DIR``
    where those files are.

The points (where each is reached is said beside its call):

``opening.presses``, ``opening.workers``, ``opening.store``, ``opening.recovered``,
``opening.context``, ``opening.listed``: the moments of a run's opening
(docs/concepts/cancellation.md, "Early presses").
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

AT_ENV = "STEMMA_PAUSE_AT"
"""The point the process pauses at, by name."""
DIR_ENV = "STEMMA_PAUSE_DIR"
"""The folder of the ``NAME.reached`` and ``NAME.go`` files."""
PAUSE_LIMIT = 300.0
"""Seconds a pause lasts at most."""
_POLL = 0.005

_AT = os.environ.get(AT_ENV, "").strip()
_DIR = os.environ.get(DIR_ENV, "").strip()
if _AT and not _DIR:
    raise ValueError(f"${AT_ENV} is set but ${DIR_ENV} is not: set {DIR_ENV} to a folder")
ARMED = bool(_AT)
"""Whether this process pauses anywhere (read once, at import)."""
_lock = threading.Lock()
_paused = False


def pause_point(name: str) -> None:
    """Mark reaching the moment ``name``; the armed one pauses here once (see the module).

    Args:
        name: dotted and stable (``opening.store``).
    """
    if ARMED and name == _AT:
        _pause(name)


def _pause(name: str) -> None:
    global _paused
    with _lock:
        if _paused:
            return
        _paused = True
    folder = Path(_DIR)
    reached = folder / f"{name}.reached"
    reached.with_suffix(".tmp").write_text(str(os.getpid()))
    reached.with_suffix(".tmp").replace(reached)  # whole when seen
    go = folder / f"{name}.go"
    deadline = time.monotonic() + PAUSE_LIMIT
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(_POLL)
