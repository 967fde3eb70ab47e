"""What a wave commit reports about the bundles it left out, and how long it waits for them.

Every store's commit speaks this vocabulary (the SQLite store here, the Delta store in
stemma-storage). On a shared filesystem a bundle a worker finished on another node may show up
late on the committer's node: its directory, its sentinel or a file. A commit looks again with
exponential backoff (:class:`Backoff`) until the bundle is whole or the staging timeout passes
(:func:`staging_timeout`: the store's ``staging_timeout=``, else ``$STEMMA_STAGING_TIMEOUT``,
else 30 seconds). A file that is there but cannot be read is *corrupt*: waiting does not fix it,
so it is reported (and quarantined) at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from stemma.core.env_seconds import seconds_setting
from stemma.core.errors import StemmaError

STAGING_TIMEOUT_ENV = "STEMMA_STAGING_TIMEOUT"
"""The environment variable giving the staging timeout in seconds."""
DEFAULT_STAGING_TIMEOUT = 30.0
"""How long a commit waits for a staged bundle's late files, in seconds, when not configured."""


class StagedBundleError(StemmaError, ValueError):
    """A staged bundle cannot be committed, whichever store's.

    A path handed to a commit is not a bundle staged under this store's root, or (read by the
    Delta store) the bundle has no sentinel, or a file it lists is missing or unreadable. A
    bundle without its sentinel was left by a writer that has not finished (or died):
    ``recover()`` removes such bundles once they are old enough, and never commits them.
    """


class ProblemKind(StrEnum):
    """Why a staged bundle was left out of a commit."""

    MISSING = "missing"
    """Its directory, sentinel or records never appeared: it stays in staging, and the next
    ``recover()`` commits it if it is whole by then."""
    CORRUPT = "corrupt"
    """A file is there but unreadable (truncated, garbled): moved to ``staging/.quarantine``."""


@dataclass(frozen=True, kw_only=True)
class StagingProblem:
    """A staged bundle a commit left out, and why."""

    bundle: Path
    """The bundle directory where it was staged (what the worker returned)."""
    kind: ProblemKind
    """Missing (may still come) or corrupt (quarantined)."""
    files: tuple[str, ...]
    """The file names that were missing or unreadable (empty: the whole directory)."""
    error: str
    """A message naming the bundle and the files."""
    moved_to: Path | None = None
    """Where a quarantined bundle now is."""

    def to_dict(self) -> dict[str, str | list[str] | None]:
        """A JSON-ready form, for a step event's metadata."""
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
    """The staging timeout: ``explicit``, else ``$STEMMA_STAGING_TIMEOUT``, else 30 seconds.

    Raises:
        ValueError: the timeout (given or from the environment) is negative or not a number.
    """
    return seconds_setting(
        explicit,
        env=STAGING_TIMEOUT_ENV,
        default=DEFAULT_STAGING_TIMEOUT,
        what="the staging timeout",
    )


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


def missing(bundle: Path, files: tuple[str, ...], error: str) -> StagingProblem:
    """A bundle (or some of its files) not there (yet)."""
    return StagingProblem(bundle=bundle, kind=ProblemKind.MISSING, files=files, error=error)


def corrupt(bundle: Path, files: tuple[str, ...], error: str) -> StagingProblem:
    """A bundle with a file that is there but cannot be read."""
    return StagingProblem(bundle=bundle, kind=ProblemKind.CORRUPT, files=files, error=error)
