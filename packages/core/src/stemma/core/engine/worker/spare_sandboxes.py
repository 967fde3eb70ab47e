"""The spare sandboxes of a worker running a pack, and the watch that places a long unit's.

Per step, one spare (a :class:`~stemma.core.engine.worker.sandbox_folders.Sandbox` as made)
waits under ``working/.spares/{N}_{op}/{host}/{pid}-{thread}``, where the dashboard does not
look; :mod:`~stemma.core.engine.worker.sandbox` says how a unit uses it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import Protocol

from stemma.core.engine.worker.output_capture import let_go_of_logs
from stemma.core.engine.worker.sandbox_folders import (
    Sandbox,
    move_folder,
    remove_parents,
    remove_with_parents,
)

PLACE_AFTER_SECONDS = 1.0
"""A unit still running after this long is moved to its own path (the dashboard lists it)."""
_WATCH_SECONDS = 0.25
_SPARES = ".spares"
_local = threading.local()
"""Per thread (units of the ``local-thread`` backend run side by side in one process), the
:class:`SparePool` of :func:`reused_sandboxes`."""


class Placeable(Protocol):
    """A running unit's sandbox, as the watch sees it."""

    started: float
    """When the unit started (``time.monotonic()``)."""

    def place(self) -> Sandbox:
        """Move the sandbox to the unit's own path (once)."""
        ...


def current_pool() -> SparePool | None:
    """The spares of this thread's :func:`reused_sandboxes` block (None outside one)."""
    pool: SparePool | None = getattr(_local, "pool", None)
    return pool


class SparePool:
    """The spares of one :func:`reused_sandboxes` block, and the watch on its running unit."""

    def __init__(self) -> None:
        self.spares: dict[Path, Sandbox] = {}
        """Per step folder (``working/{N}_{op}``), its spare."""
        self._homes: dict[Path, Path] = {}
        """Per step folder, where its spare waits: ``working/.spares/{N}_{op}/{host}/{pid-tid}``."""
        self._finished: dict[Path, Sandbox] = {}
        """Per step folder, the last placed unit's sandbox, as made, still at its path."""
        self._current: Placeable | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._name = f"{socket.gethostname()}/{os.getpid()}-{threading.get_ident()}"

    def take(self, working: Path, step_folder: str) -> Sandbox:
        """The step's spare, or a new one under ``working/.spares/``."""
        key = working / step_folder
        home = self._homes.setdefault(key, working / _SPARES / step_folder / self._name)
        finished = self._finished.pop(key, None)
        if finished is not None:  # the last unit's, left in place: it becomes the spare
            with contextlib.suppress(OSError):
                os.truncate(finished.log_path, 0)
                move_folder(finished.root, home)
                remove_parents(finished)
                return Sandbox(home)
            remove_with_parents(finished)
        spare = self.spares.pop(key, None)
        if spare is not None:
            return spare
        shutil.rmtree(home, ignore_errors=True)  # a killed worker's, whose pid this one reuses
        return Sandbox.make(home)

    def give_back(self, final: Sandbox, spare: Sandbox) -> None:
        """Keep ``spare`` (as made, its log empty) for the next unit of ``final``'s step."""
        step_folder = _step_folder(final)
        if step_folder in self.spares:  # (one unit at a time: never, but never lose a folder)
            spare.remove()
        else:
            self.spares[step_folder] = spare

    def return_placed(self, final: Sandbox) -> None:
        """Leave a placed sandbox that is as made where it is, for the next unit; else remove it.

        Left in place, the finished unit still shows on the dashboard until the next unit
        starts or its pack is staged, as a unit in a pack has always shown (never a gap).
        """
        step_folder = _step_folder(final)
        free = step_folder not in self.spares and step_folder not in self._finished
        if free and final.as_made():
            self._finished[step_folder] = final
            return
        remove_with_parents(final)

    def watch(self, unit: Placeable | None) -> None:
        """Watch ``unit`` (None: no unit running); the watcher starts with the first."""
        self._current = unit
        if unit is not None and self._watcher is None:
            self._watcher = threading.Thread(
                target=self._watch, name="stemma-sandbox-watch", daemon=True
            )
            self._watcher.start()

    def _watch(self) -> None:
        while not self._stop.wait(_WATCH_SECONDS):
            unit = self._current
            if unit is not None and time.monotonic() - unit.started >= PLACE_AFTER_SECONDS:
                with contextlib.suppress(OSError, RuntimeError):  # its own use of it will say
                    unit.place()

    def close(self) -> None:
        """Stop watching and remove the spares (and their folders, when left empty)."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
        for finished in self._finished.values():
            remove_with_parents(finished)
        for spare in self.spares.values():
            spare.remove()
        self.spares.clear()
        self._finished.clear()
        for step_folder, home in self._homes.items():  # the folders made on the way, if empty
            for folder in (*home.parents[:3], step_folder):  # {host}, {N}_{op}, .spares
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _step_folder(final: Sandbox) -> Path:
    """``working/{N}_{op}`` of a unit's sandbox ``working/{N}_{op}/{ab}/{cd}/{id}``."""
    return final.root.parents[2]


@contextlib.contextmanager
def reused_sandboxes() -> Generator[None]:
    """Let the units run inside start in spares and reuse them (one unit at a time per thread).

    What a unit sees is the same either way: its own path, four empty folders and an empty log.
    The spares' logs that captures kept open (``capture_output(keep_open=True)``) are closed at
    the end.
    """
    pool = SparePool()
    _local.pool = pool
    try:
        yield
    finally:
        _local.pool = None
        let_go_of_logs()
        pool.close()
