"""The errors stemma.storage raises: one root, one subclass per failure a caller can act on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stemma.core.errors import DamagedStoreError, StemmaError
from stemma.core.store.staging.problems import StagedBundleError

__all__ = [
    "CommitConflictError",
    "DamagedTableError",
    "StagedBundleError",  # every store's (stemma.core.store.staging.problems), named here too
    "StorageError",
]


class StorageError(StemmaError):
    """Root of every error the Delta store raises on purpose."""


class CommitConflictError(StorageError, RuntimeError):
    """A Delta commit kept conflicting with concurrent writers after every retry.

    The staged bundle is left in place, so the next ``recover()`` commits it.
    """


class DamagedTableError(StorageError, DamagedStoreError):
    """A Delta table of the root cannot be read: a file of its log or data is damaged or missing.

    The message names the table and says to run ``stemma check ROOT``, which names the file and
    the fix. Like every :class:`~stemma.core.errors.DamagedStoreError`, every ``stemma`` command
    reports it as that one line, without a traceback, and exits 7 (``ExitCode.DAMAGED``).

    Attributes:
        table: the table's name under ``delta/`` (``orchestration/steps``).
        root: the stemma root.
        staged: whether work was left staged by it (a commit that could not be made).
    """

    def __init__(self, table: str, root: Path, cause: str, *, staged: bool = False) -> None:
        message = (
            f"table {table} of {root} cannot be read: {cause}. "
            f"`stemma check {root}` names the damaged file and the fix"
        )
        if staged:
            message += (
                f". Nothing is lost: the work is staged under {root / 'staging'} and is "
                "committed, once, by the next run on this root after the table is repaired"
            )
        super().__init__(message)
        self.table = table
        self.root = root
        self.staged = staged

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only ``staged``: pickle (a worker's failure) rebuilds it through this.
        return (_rebuild_damage, (self.table, self.root, self.args[0], self.staged))


def _rebuild_damage(table: str, root: Path, message: str, staged: bool) -> DamagedTableError:
    error = DamagedTableError(table, root, "", staged=staged)
    error.args = (message,)
    return error
