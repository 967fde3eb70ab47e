"""The errors stemma.storage raises: one root, one subclass per failure a caller can act on."""

from __future__ import annotations

from stemma.core.errors import StemmaError


class StorageError(StemmaError):
    """Root of every error the Delta store raises on purpose."""


class StagedBundleError(StorageError, ValueError):
    """A staged bundle cannot be committed: its sentinel is missing or a file is unreadable.

    A bundle without ``executions.parquet`` was left by a writer that has not finished (or died);
    ``recover()`` deletes such bundles once they are old enough, and never commits them.
    """


class CommitConflictError(StorageError, RuntimeError):
    """A Delta commit kept conflicting with concurrent writers after every retry.

    The staged bundle is left in place, so the next ``recover()`` commits it.
    """
