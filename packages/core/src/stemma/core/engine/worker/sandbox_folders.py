"""A sandbox's folders on disk: made, checked, moved and removed.

``working/{N}_{op}/{ab}/{cd}/{execution_run_id}/`` holds four folders and the unit's log
(:class:`Sandbox`); :mod:`~stemma.core.engine.worker.sandbox` decides where and when.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

_AS_MADE = frozenset({"materialized_inputs", "preprocess", "execute", "postprocess"})
_ATTEMPTS = 5
"""Tries at making or moving a sandbox while other workers remove the parents they emptied."""


@dataclass(frozen=True)
class Sandbox:
    """A sandbox's folder and the folders inside it."""

    root: Path

    @classmethod
    def make(cls, root: Path) -> Sandbox:
        """Make the folders and the empty log at ``root`` (its parents too).

        Another worker removes the shared parents it leaves empty (``{ab}``, ``{cd}``,
        ``.spares/{N}_{op}``: one ``rmdir`` each, which fails on a folder in use): one made
        here may go before its child is made, so try again.
        """
        sandbox = cls(root)
        for attempt in range(_ATTEMPTS):
            try:
                for folder in (sandbox.materialized_inputs, sandbox.preprocess, sandbox.execute):
                    make_folder(folder)
                sandbox.postprocess.mkdir(exist_ok=True)
                sandbox.log_path.touch()
            except FileNotFoundError:
                if attempt == _ATTEMPTS - 1:
                    raise
            else:
                return sandbox
        raise AssertionError("unreachable")  # (the loop returns or raises)

    @property
    def materialized_inputs(self) -> Path:  # noqa: D102
        return self.root / "materialized_inputs"

    @property
    def preprocess(self) -> Path:  # noqa: D102
        return self.root / "preprocess"

    @property
    def execute(self) -> Path:  # noqa: D102
        return self.root / "execute"

    @property
    def postprocess(self) -> Path:  # noqa: D102
        return self.root / "postprocess"

    @property
    def log_path(self) -> Path:
        """``tool_output.log``: the captured stdout and stderr of the lifecycle."""
        return self.root / "tool_output.log"

    def remove(self) -> None:
        """Delete the sandbox (best effort): by name when it is as made, else by a tree walk."""
        try:
            self.log_path.unlink(missing_ok=True)
            for folder in (self.materialized_inputs, self.preprocess, self.execute):
                folder.rmdir()
            self.postprocess.rmdir()
            self.root.rmdir()
        except OSError:
            shutil.rmtree(self.root, ignore_errors=True)

    def as_made(self) -> bool:
        """Four empty folders and the log (a file), nothing else."""
        try:
            with os.scandir(self.root) as entries:
                found = {e.name: e for e in entries}
            if found.keys() != _AS_MADE | {self.log_path.name}:
                return False
            if not found[self.log_path.name].is_file(follow_symlinks=False):
                return False
            return all(
                found[name].is_dir(follow_symlinks=False) and not os.listdir(found[name].path)
                for name in _AS_MADE
            )
        except OSError:
            return False


def make_folder(folder: Path) -> None:
    """``mkdir -p folder``, where a parent another worker removes meanwhile is always missing.

    ``Path.mkdir(parents=True, exist_ok=True)`` raises ``FileExistsError`` when the folder was
    there as it tried and gone when it looked again (another worker's ``rmdir`` of a parent it
    emptied, in between): that is the same race as a parent missing, and is tried again as one.

    Raises:
        FileNotFoundError: a parent was removed meanwhile (try again).
        FileExistsError: a file, not a folder, is in the way.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        if folder.is_dir():
            return
        if folder.exists():
            raise
        raise FileNotFoundError(f"{folder} was removed as it was made") from None


def remove_with_parents(sandbox: Sandbox) -> None:
    """Remove a unit's sandbox and the ``{cd}`` and ``{ab}`` folders it leaves empty."""
    sandbox.remove()
    remove_parents(sandbox)


def remove_parents(sandbox: Sandbox) -> None:
    """Remove the ``{cd}`` and ``{ab}`` folders above a unit's sandbox when they are empty."""
    for parent in (sandbox.root.parent, sandbox.root.parent.parent):  # {cd}, then {ab}
        with contextlib.suppress(OSError):  # not empty: another unit's, or being made
            parent.rmdir()


def move_folder(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target``, making its parents.

    Another worker removes an ``{ab}`` or ``{cd}`` folder it emptied (one ``rmdir`` each, which
    fails on a folder in use): a parent made here may go before the rename, so try again.
    """
    for attempt in range(_ATTEMPTS):
        try:
            make_folder(target.parent)
            source.rename(target)
            return
        except FileNotFoundError:
            if attempt == _ATTEMPTS - 1 or not source.exists():
                raise
