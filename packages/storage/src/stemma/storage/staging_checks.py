"""Verifying staged bundles before a commit: late files waited for, corrupt files named.

On a shared filesystem (NFS, Lustre) a bundle a worker finished on another node may show up
late on the committer's node: its directory, its sentinel, or a file its sentinel lists.
:func:`check_bundle` looks once; the wave commit calls it again with exponential backoff
(:class:`Backoff`) until the bundle is whole or the staging timeout passes
(:func:`staging_timeout`: ``DeltaStore(staging_timeout=…)``, else ``$STEMMA_STAGING_TIMEOUT``,
else :data:`DEFAULT_STAGING_TIMEOUT`). A file that is there but cannot be read is *corrupt*:
waiting does not fix it, so it is reported at once.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import polars as pl

from stemma.storage.env_numbers import env_number
from stemma.storage.errors import StagedBundleError
from stemma.storage.sentinel import SENTINEL, Listing, read_listing

STAGING_TIMEOUT_ENV = "STEMMA_STAGING_TIMEOUT"
"""The environment variable giving the staging timeout in seconds."""
DEFAULT_STAGING_TIMEOUT = 30.0
"""How long a commit waits for a staged bundle's late files, in seconds, when not configured."""


class ProblemKind(StrEnum):
    """Why a staged bundle was left out of a commit."""

    MISSING = "missing"
    """Its directory, sentinel or a listed file never appeared: it stays in staging, and the
    next ``recover()`` commits it if it is whole by then."""
    CORRUPT = "corrupt"
    """A file is there but unreadable (truncated, garbled): moved to ``staging/.quarantine``."""


@dataclass(frozen=True, kw_only=True)
class StagingProblem:
    """A staged bundle a commit left out, and why."""

    bundle: Path
    """The bundle directory where it was staged."""
    kind: ProblemKind
    """Missing (may still come) or corrupt (quarantined)."""
    files: tuple[str, ...]
    """The file names that were missing or unreadable (empty: the whole directory)."""
    error: str
    """A message naming the bundle and the files."""
    moved_to: Path | None = None
    """Where a quarantined bundle now is."""

    def to_dict(self) -> dict[str, str | list[str] | None]:
        """A JSON-ready form, for a step event's metadata or a wave's manifest."""
        return {
            "bundle": str(self.bundle),
            "kind": self.kind.value,
            "files": list(self.files),
            "error": self.error,
            "moved_to": str(self.moved_to) if self.moved_to is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StagingProblem:
        """The problem :meth:`to_dict` described."""
        moved = data.get("moved_to")
        return cls(
            bundle=Path(str(data["bundle"])),
            kind=ProblemKind(str(data["kind"])),
            files=tuple(str(name) for name in data.get("files") or ()),
            error=str(data["error"]),
            moved_to=Path(str(moved)) if moved else None,
        )


@dataclass(frozen=True, kw_only=True)
class WaveReport:
    """What committing a wave did: how many bundles it wrote, and which it left out."""

    committed: int
    """How many bundles this call committed (already committed ones are not counted)."""
    problems: tuple[StagingProblem, ...] = ()
    """The bundles left out: missing ones stay in staging, corrupt ones were quarantined."""

    @property
    def left_out(self) -> tuple[Path, ...]:
        """Where each left-out bundle was staged (what a worker returned for it)."""
        return tuple(problem.bundle for problem in self.problems)


def staging_timeout(explicit: float | None = None) -> float:
    """The staging timeout: ``explicit``, else ``$STEMMA_STAGING_TIMEOUT``, else the default.

    Raises:
        ValueError: the timeout (given or from the environment) is negative or not a number.
    """
    if explicit is None:
        return env_number(
            STAGING_TIMEOUT_ENV,
            DEFAULT_STAGING_TIMEOUT,
            minimum=0.0,
            expected="a number of seconds >= 0",
        )
    if not explicit >= 0:
        raise ValueError(f"the staging timeout must be a number of seconds >= 0, got {explicit}")
    return float(explicit)


@dataclass(kw_only=True)
class Backoff:
    """Exponential backoff with jitter, up to a deadline shared by every bundle of a wave."""

    deadline: float
    """When to stop waiting, on ``clock``'s scale."""
    delay: float = 0.01
    """The first wait, in seconds; doubled after each, up to ``cap``."""
    cap: float = 1.0
    """The longest single wait, in seconds."""
    clock: Callable[[], float] = field(default=time.monotonic)
    sleep: Callable[[float], None] = field(default=time.sleep)

    @classmethod
    def for_timeout(cls, timeout: float) -> Backoff:
        """A backoff whose deadline is ``timeout`` seconds from now."""
        return cls(deadline=time.monotonic() + timeout)

    def wait(self) -> bool:
        """Sleep the next backoff interval; ``False`` (without sleeping) once past the deadline."""
        remaining = self.deadline - self.clock()
        if remaining <= 0:
            return False
        self.sleep(min(remaining, self.delay * (0.5 + random.random())))
        self.delay = min(self.cap, self.delay * 2)
        return True


def check_bundle(bundle: Path) -> Listing | StagingProblem:
    """Look once whether a bundle is whole: its directory, its sentinel, every listed file.

    Only the sentinel's Parquet footer is read (to list the tables and their rows); the other
    files are checked for presence, all from one listing of the directory (a wave checks
    thousands of bundles, and a ``stat`` per file would cost a third of their claim).

    Returns:
        What the sentinel lists, when the bundle can be committed, else what is wrong.
    """
    try:
        with os.scandir(bundle) as entries:
            present = {entry.name for entry in entries if entry.is_file()}
    except (FileNotFoundError, NotADirectoryError):
        return _missing(bundle, (), f"the staged bundle {bundle} is not there")
    if SENTINEL not in present:
        return _missing(bundle, (SENTINEL,), f"{bundle} has no {SENTINEL} (its sentinel)")
    try:
        listing = read_listing(bundle)
    except StagedBundleError as err:
        return _corrupt(bundle, (SENTINEL,), str(err))
    absent = tuple(s.staged_name for s in listing.tables if s.staged_name not in present)
    if absent:
        return _missing(
            bundle, absent, f"{bundle} lists {', '.join(absent)} in its {SENTINEL}, not there"
        )
    return listing


def check_readable(bundle: Path) -> StagingProblem | None:
    """Read every file of a whole bundle through; name the first one that cannot be read."""
    checked = check_bundle(bundle)
    if isinstance(checked, StagingProblem):
        return checked
    for spec in checked.tables:
        file = bundle / spec.staged_name
        try:
            pl.read_parquet(file)
        except (OSError, pl.exceptions.PolarsError) as err:
            return _corrupt(bundle, (file.name,), f"cannot read the staged file {file}: {err}")
    return None


def _missing(bundle: Path, files: tuple[str, ...], error: str) -> StagingProblem:
    return StagingProblem(bundle=bundle, kind=ProblemKind.MISSING, files=files, error=error)


def _corrupt(bundle: Path, files: tuple[str, ...], error: str) -> StagingProblem:
    return StagingProblem(bundle=bundle, kind=ProblemKind.CORRUPT, files=files, error=error)
