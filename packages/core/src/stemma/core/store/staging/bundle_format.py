"""The seam: what a store's bundles hold, the one part of staging each store supplies.

The staging protocol (this package) is the same for every store: where a bundle goes, the
order its files are written in, the sentinel written last, how a commit checks that a bundle is
whole, worker-log notes beside it, what recovery does with what a dead process left, how a
committed bundle is retired and an unreadable one quarantined. What differs is how a pack's rows
are written as files (the SQLite store: one JSON document and a JSON sentinel; the Delta store:
a Parquet file per table, ``executions.parquet`` the sentinel) and how a commit is recorded,
which each store does its own way (:class:`~stemma.core.store.staging.recovery.Recovering` is
the part of that recovery calls). A store hands its :class:`BundleFormat` to
:func:`~stemma.core.store.staging.writing.stage_bundle` and
:func:`~stemma.core.store.staging.recovery.recover_bundles`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from stemma.core.store.staging.visibility import BundleShape

if TYPE_CHECKING:
    from stemma.core.execution_records import ExecutionRecord
    from stemma.core.store.locations import RootLayout

S = TypeVar("S")
"""What a store's sentinel says about its bundle."""


class BundleFiles(Protocol):
    """A pack's rows encoded as one store's files, ready to be written into a bundle."""

    def write_tables(self, bundle: Path) -> None:
        """Write every file but the sentinel into ``bundle``, each fsynced before it returns."""
        ...

    def write_sentinel(self, bundle: Path) -> None:
        """Write the sentinel, fsynced, appearing whole under its name (by a rename)."""
        ...


class BundleFormat(Protocol[S]):
    """What one store's bundles hold and how its stagers write them."""

    @property
    def shape(self) -> BundleShape[S]:
        """The sentinel's name, how it is read, and the files it lists: what a check looks at."""
        ...

    def step_dir(self, step_number: int, step_name: str) -> str:
        """The staging directory of a step's bundles (one path segment)."""
        ...

    def encode(self, records: Sequence[ExecutionRecord]) -> BundleFiles:
        """A pack's records as this store's files (nothing is written yet).

        Raises:
            ArtifactTypeError: an artifact cannot be encoded.
        """
        ...

    def writing(self, layout: RootLayout, bundle: Path) -> AbstractContextManager[object]:
        """What a stager holds while it writes ``bundle`` (the Delta store: the bundle's lock)."""
        ...

    def owns(self, names: Collection[str]) -> bool:
        """Whether a bundle directory holding the files ``names`` is this store's to recover."""
        ...
