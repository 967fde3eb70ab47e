"""Whether a staged bundle's files can be read here: one listing, or each file opened and read.

A worker on another node stages a bundle on a filesystem both nodes mount (NFS, Lustre), and
the committer's node may see it late. Listing the bundle's directory is the cheap way to look,
and on a local disk it is the truth. On NFS it is not: the client caches directory entries and
file attributes for seconds, so a listing can miss a file that is there, or show one whose
content is not visible yet (empty, or short). What NFS does promise is close-to-open
consistency: a file opened after its writer closed it shows everything written before the
close. So where the root is shared (the backend says ``shared_filesystem``), each file the
bundle needs is opened and read — its size taken from the open file, its first and last byte
read, its size compared with what the sentinel recorded when it records one — never listed or
stat'ed. A file that cannot be read *yet* is reported *missing*, which the commit looks at again
with backoff (:class:`~stemma.core.store.staging.problems.Backoff`) up to the staging timeout,
instead of *corrupt*, which would quarantine a good bundle.

Both stores check their bundles here (:func:`check_staged`): the SQLite store's
(``sentinel.json`` + ``records.json``) and the Delta store's (``executions.parquet`` listing
the other Parquet files); only a :class:`BundleShape` differs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Generic, Protocol, TypeVar, runtime_checkable

from stemma.core.store.staging.problems import StagingProblem, corrupt, missing

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class BundleShape(Generic[T]):
    """What one store's bundles look like to the check."""

    sentinel: str
    """The file written last, whose presence marks the bundle complete."""
    read_sentinel: Callable[[Path], T]
    """Reads the bundle's sentinel. Raises ``FileNotFoundError`` when the bundle is gone, and
    ``OSError`` or ``ValueError`` (with a message naming the file) when it cannot be read."""
    listed: Callable[[T], Mapping[str, int | None]]
    """The other files the sentinel lists, with their size in bytes when it records it."""


@runtime_checkable
class SharedStagingStore(Protocol):
    """A store whose commits can check staged files by reading them (see the module)."""

    @property
    def shared_filesystem(self) -> bool:
        """Whether staged files are checked by opening and reading them."""
        ...

    def expect_shared_filesystem(self) -> None:
        """From now on, check staged files by opening and reading them, never by listing."""
        ...


def shares_root(backend: object) -> bool:
    """Whether ``backend``'s workers write the root from other hosts (``shared_filesystem``).

    A backend without the attribute (the local ones) runs its workers on this host.
    """
    return getattr(backend, "shared_filesystem", False) is True


def check_staged(bundle: Path, shape: BundleShape[T], *, shared: bool) -> T | StagingProblem:
    """Look once whether a bundle is whole: its directory, its sentinel, every file it lists.

    Args:
        bundle: the bundle directory.
        shape: the store's bundle layout.
        shared: open and read each file (a shared filesystem) instead of one directory listing.

    Returns:
        What the sentinel says, when the bundle can be committed; else a *missing* problem (may
        still come: look again later) or a *corrupt* one (there but unreadable: quarantine it).
    """
    if shared:
        return _check_by_reading(bundle, shape)
    return _check_by_listing(bundle, shape)


def _check_by_listing(bundle: Path, shape: BundleShape[T]) -> T | StagingProblem:
    # One listing for every file: a wave checks thousands of bundles, and a stat per file
    # would cost a third of their claim.
    try:
        with os.scandir(bundle) as entries:
            present = {entry.name for entry in entries if entry.is_file()}
    except (FileNotFoundError, NotADirectoryError):
        return _gone(bundle)
    if shape.sentinel not in present:
        return _no_sentinel(bundle, shape)
    found = _read_sentinel(bundle, shape)
    if isinstance(found, StagingProblem):
        return found
    absent = tuple(name for name in shape.listed(found) if name not in present)
    if absent:
        return missing(
            bundle,
            absent,
            f"{bundle} lists {', '.join(absent)} in its {shape.sentinel}, not there",
        )
    return found


def _check_by_reading(bundle: Path, shape: BundleShape[T]) -> T | StagingProblem:
    seen = read_through(bundle / shape.sentinel)
    if seen is Seen.GONE:
        return _no_sentinel(bundle, shape) if bundle.is_dir() else _gone(bundle)
    if seen is Seen.SHORT:
        return missing(
            bundle,
            (shape.sentinel,),
            f"{bundle / shape.sentinel} is there but its content is not readable yet "
            "(empty on this host)",
        )
    found = _read_sentinel(bundle, shape)
    if isinstance(found, StagingProblem):
        return found
    late = tuple(
        name
        for name, size in shape.listed(found).items()
        if read_through(bundle / name, size) is not Seen.READABLE
    )
    if late:
        return missing(
            bundle,
            late,
            f"{bundle} lists {', '.join(late)} in its {shape.sentinel}, not readable there "
            "(absent, or shorter than staged, on this host)",
        )
    return found


class Seen(Enum):
    """What opening and reading a staged file showed."""

    GONE = "gone"
    """No such file (or directory) on this host, yet."""
    SHORT = "short"
    """There, but empty or shorter than staged: its content is not visible here yet."""
    READABLE = "readable"
    """Opened, and its first and last byte read."""


def read_through(path: Path, size: int | None = None) -> Seen:
    """Open ``path`` and read its first and last byte (close-to-open: what NFS promises).

    Args:
        path: the staged file.
        size: its size in bytes when its sentinel records it; shorter is not visible yet.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return Seen.GONE
    try:
        # Every file a store stages holds at least a header: empty means not visible yet.
        length = os.fstat(fd).st_size
        if length == 0 or (size is not None and length < size):
            return Seen.SHORT
        # The last byte too: a client that sees the new size but not the data reads zeroes
        # or a short read there first.
        first, last = os.pread(fd, 1, 0), os.pread(fd, 1, length - 1)
        return Seen.READABLE if len(first) == len(last) == 1 else Seen.SHORT
    finally:
        os.close(fd)


def _read_sentinel(bundle: Path, shape: BundleShape[T]) -> T | StagingProblem:
    try:
        return shape.read_sentinel(bundle)
    except FileNotFoundError:
        return _gone(bundle)
    except (OSError, ValueError) as err:
        return corrupt(bundle, (shape.sentinel,), str(err))


def _gone(bundle: Path) -> StagingProblem:
    return missing(bundle, (), f"the staged bundle {bundle} is not there")


def _no_sentinel(bundle: Path, shape: BundleShape[T]) -> StagingProblem:
    return missing(bundle, (shape.sentinel,), f"{bundle} has no {shape.sentinel} (its sentinel)")
