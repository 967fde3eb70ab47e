"""How a local worker process starts: deaf to Ctrl-C, and gone when its orchestrator is gone.

Ctrl-C in a terminal reaches the whole process group; only the orchestrator may decide what a
press means, so workers ignore SIGINT. A worker still starting up when a press lands would die
of it before any initializer runs, so the orchestrator spawns workers with SIGINT and SIGTERM
*blocked* (:func:`signals_blocked`; the mask survives ``exec``), and the initializer ignores
SIGINT before unblocking. If the orchestrator is killed outright (``kill -9``, a hard cancel),
nobody is left to stop the workers: each watches its parent and exits when it changes.

A worker also imports what a Pipeline unit needs (the worker's modules, and the store's: polars,
pyarrow, delta-rs) in its initializer, as soon as the pool starts it: a second or two per worker
that would otherwise sit in front of the first unit it is given.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import threading
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

from stemma.core.backends.worker_deaths import process_alive

_DEFERRED = {signal.SIGINT, signal.SIGTERM}
PARENT_CHECK_SECONDS = 0.5
WARM_MODULES = ("stemma.core.engine.worker.worker_entry", "stemma.core.engine.worker.worker")
"""What every Pipeline unit imports first (the store's module is added: see ``warm_up``)."""


@contextlib.contextmanager
def signals_blocked() -> Generator[None]:
    """Block SIGINT and SIGTERM in this thread while it may spawn worker processes.

    Threads and processes started meanwhile inherit the mask; the signals stay pending, not
    lost, and are delivered when the block ends.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def init_worker(orchestrator_pid: int, warm: bool = False) -> None:
    """The pool initializer: ignore SIGINT, accept SIGTERM, and follow the orchestrator out.

    Args:
        orchestrator_pid: the process that spawned the pool, given by it: if it died before
            this worker got here, ``os.getppid()`` is already someone else.
        warm: import what a Pipeline unit needs now (:func:`warm_up`), after the watchdog
            runs, so an orphan still exits while importing.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)
    parent = orchestrator_pid
    watchdog = threading.Thread(
        target=_exit_when_orphaned, args=(parent,), name="stemma-parent-watch", daemon=True
    )
    watchdog.start()
    if warm:
        warm_up()


def warm_up() -> None:
    """Import the Pipeline worker's modules and the default store's, ignoring any failure.

    A module that fails here fails again, with its error reported, in the unit that needs it;
    an initializer that raised would break the whole pool instead.
    """
    names: list[str] = list(WARM_MODULES)
    with contextlib.suppress(Exception):
        names.append(_store_module() or "")
    for name in filter(None, names):
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def _store_module() -> str | None:
    """The module a worker opens of the default store: its worker store's, else the store's."""
    from stemma.core.store.opening import available_stores, default_store_kind
    from stemma.core.store.worker_store import worker_store_targets

    kind = default_store_kind()
    target = worker_store_targets().get(kind) or available_stores().get(kind)
    return target.partition(":")[0] if target else None


def _exit_when_orphaned(parent: int) -> None:
    stop = threading.Event()
    while True:
        # Under forkserver our parent is the forkserver: ask after the orchestrator itself.
        if os.getppid() != parent and not process_alive(parent):
            os._exit(70)  # EX_SOFTWARE; staged bundles are committed at the next start
        stop.wait(PARENT_CHECK_SECONDS)


def run_tracked(fn: Callable[[Any], Any], payload: Any, marker: str) -> Any:
    """Run ``fn(payload)`` after writing this worker's pid to ``marker``.

    If the worker dies, the backend reads the marker to tell whether this unit was the one
    running in the worker that died first (see ``worker_deaths``).
    """
    Path(marker).write_text(str(os.getpid()))
    return fn(payload)
