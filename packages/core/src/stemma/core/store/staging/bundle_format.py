"""The seam: how a store's rows are written as files, the one part of staging a store supplies.

Everything else about staging is the same for every store (this package). How a commit is
recorded is each store's own; recovery calls the part of it that it needs through
:class:`~stemma.core.store.staging.recovery.Recovering`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

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


@dataclass(frozen=True, kw_only=True)
class BundleFormat(Generic[S]):
    """What one store's bundles hold and how its stagers write them."""

    shape: BundleShape[S]
    """The sentinel's name, how it is read, and the files it lists: what a check looks at."""
    step_dir: Callable[[int, str], str]
    """The staging directory (one path segment) of a step's bundles, by number and name."""
    encode: Callable[[Sequence[ExecutionRecord]], BundleFiles]
    """A pack's records as the store's files, nothing written yet (raises
    ``ArtifactTypeError`` for an artifact it cannot encode)."""
    writing: Callable[[RootLayout, Path], AbstractContextManager[object]]
    """What a stager holds while it writes a bundle (the Delta store: the bundle's lock)."""
    owns: Callable[[Collection[str]], bool]
    """Whether a bundle directory holding these file names is the store's to recover."""
