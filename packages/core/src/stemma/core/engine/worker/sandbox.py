"""A creator's sandbox: ``working/{N}_{op}/{ab}/{cd}/{execution_run_id}/`` and what it holds.

Most units of a large step never touch their sandbox (an operation that turns its params into
a metric), and for them making and removing a dozen directories was most of a unit's cost. So
inside ``reused_sandboxes`` (:mod:`~stemma.core.engine.worker.spare_sandboxes`: a worker
running its pack) a unit starts in a *spare*: a sandbox already made, kept under
``working/.spares/`` where nobody looks for running units, whose ``tool_output.log`` captures
the unit's output from the start. The spare is moved (one rename) to the unit's own path only
when something may use it (:meth:`UnitSandbox.place`):

- the operation reads any of the sandbox's paths (``sandbox_dir``, ``execute_dir``,
  ``log_path``), so it can only ever write where it was told after the move;
- inputs are written as files into ``materialized_inputs/``;
- the unit is still running after ``PLACE_AFTER_SECONDS`` (a second), so the dashboard lists
  it and follows its log at its usual path (the open log follows the rename: the same file).

A unit that used none of it ends with its log emptied and the spare kept for the next unit. A
placed one left as made stays at its path (the dashboard still shows it) until the next unit
takes it back as the spare or the pack is staged; otherwise it is removed. Outside a pack (or
with ``preserve_working``), each unit gets its own sandbox made in place.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

from stemma.core.backends import worker_stop
from stemma.core.engine.worker.sandbox_folders import Sandbox, move_folder, remove_with_parents
from stemma.core.engine.worker.spare_sandboxes import SparePool, current_pool

__all__ = ["Sandbox", "UnitSandbox"]


class UnitSandbox:
    """One unit's sandbox, moved to its own path only when something may use it."""

    def __init__(self, final: Sandbox, spare: Sandbox | None, pool: SparePool | None) -> None:
        """``spare``: where the unit starts (None: ``final`` is already made)."""
        self.final = final
        self._spare = spare
        self._pool = pool
        self._lock = threading.Lock()
        self._open = True
        self.started = time.monotonic()
        self._started_wall = time.time()

    @classmethod
    def open(
        cls, working: Path, step_number: int, operation: str, run_id: str, *, keep: bool
    ) -> UnitSandbox:
        """The sandbox of one execution under the store's ``working`` folder.

        ``keep`` (``preserve_working``) makes it in place: a kept sandbox is one to look at.
        """
        step_folder = working / f"{step_number}_{operation}"
        final = Sandbox(step_folder / run_id[:2] / run_id[2:4] / run_id)
        pool = current_pool()
        if pool is None or keep:
            return cls(Sandbox.make(final.root), None, None)
        with _unbroken():
            unit = cls(final, pool.take(working, step_folder.name), pool)
        pool.watch(unit)
        return unit

    @property
    def reused(self) -> bool:
        """Whether the unit started in a spare, whose log the next unit of its pack reuses."""
        return self._pool is not None

    @property
    def placed(self) -> bool:
        """Whether the sandbox is at the unit's own path."""
        return self._spare is None

    @property
    def log_path(self) -> Path:
        """Where the unit's log is now (the spare's until the sandbox is placed)."""
        with self._lock:
            return (self._spare or self.final).log_path

    def place(self) -> Sandbox:
        """Move the spare to the unit's own path (once); the sandbox, in place.

        Raises:
            OSError: the move failed (the unit then fails saying so).
            RuntimeError: the unit has ended (its paths were read too late).
        """
        with self._lock, _unbroken():
            if self._spare is not None and not self._open:
                raise RuntimeError(
                    f"the sandbox of execution {self.final.root.name} was asked for after its "
                    "unit ended; read inp.sandbox_dir, execute_dir or log_path while it runs"
                )
            if self._spare is not None:
                move_folder(self._spare.root, self.final.root)
                self._spare = None
                # The dashboard dates a running unit by its sandbox folder: the unit's start.
                with contextlib.suppress(OSError):  # (only a date: the move is what counts)
                    os.utime(self.final.root, (self._started_wall, self._started_wall))
            return self.final

    def files(self) -> list[Path]:
        """Every regular file under ``execute/``, sorted (none if the sandbox was never placed)."""
        if not self.placed:
            return []
        return sorted(path for path in self.final.execute.rglob("*") if path.is_file())

    def stop_placing(self) -> None:
        """The operation's code is done: nothing moves the sandbox any more."""
        with self._lock:
            self._open = False
        if self._pool is not None:
            self._pool.watch(None)

    def release(self, *, keep: bool) -> None:
        """The unit ended: keep its sandbox (``keep``), hand it back as the spare, or remove it."""
        with _unbroken():
            self._release(keep=keep)

    def _release(self, *, keep: bool) -> None:
        self.stop_placing()
        if keep and self.placed:
            return
        if self._pool is None:
            remove_with_parents(self.final)
            return
        if self._spare is not None:  # never placed: only the log may hold something
            with contextlib.suppress(OSError):
                os.truncate(self._spare.log_path, 0)
                self._pool.give_back(self.final, self._spare)
                return
            self._spare.remove()
            return
        self._pool.return_placed(self.final)


def _unbroken() -> contextlib.AbstractContextManager[None]:
    """On a worker's main thread, hold a time-limit stop until the block is done.

    A stop raises in the main thread wherever it is; between a folder's move and the note of
    it, the sandbox would be lost track of (left under ``working/``). Other threads (the watch,
    the ``local-thread`` backend's units) are never interrupted by one.
    """
    if threading.current_thread() is threading.main_thread():
        return worker_stop.held()
    return contextlib.nullcontext()
