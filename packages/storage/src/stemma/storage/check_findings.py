"""What ``stemma check`` finds: each problem with its file and fix, and what ``--repair`` did."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Severity(StrEnum):
    """How bad a problem is."""

    DAMAGED = "damaged"
    """Something cannot be read: a table, a log entry, a state file."""
    ATTENTION = "attention"
    """Nothing is unreadable, but something waits for a hand: staged work, a stale run."""


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One thing wrong with a root."""

    severity: Severity
    """How bad it is."""
    path: Path | str
    """The file (or directory) it is about: a path, or a URL for an object in a bucket."""
    what: str
    """What is wrong with it, in words that follow the path."""
    fix: str
    """What to do, with the exact command where there is one."""
    repair: Callable[[], str] | None = field(default=None, compare=False, repr=False)
    """What ``--repair`` does about it, returning what it did in words; None when no repair is
    safe and ``fix`` is for the user."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    """A problem, and what ``--repair`` made of it."""

    problem: Problem
    """What was found."""
    done: str | None = None
    """What the repair did (None: not repaired)."""
    failed: str | None = None
    """Why the repair, tried, did not work."""

    @property
    def repaired(self) -> bool:
        """Whether ``--repair`` dealt with it."""
        return self.done is not None


@dataclass(frozen=True, kw_only=True)
class CheckReport:
    """Everything ``stemma check`` looked at on one root."""

    root: Path
    """The stemma root (for a root in an object store, its local half on this machine)."""
    findings: tuple[Finding, ...]
    """Every problem, in the order found (tables first)."""
    looked_at: tuple[str, ...]
    """What was read, in words (``9 tables``, ``2 runs``…), for the summary line."""
    notes: tuple[str, ...] = ()
    """Things worth knowing that are not problems (a lock held by a live run…)."""
    url: str | None = None
    """The root's URL when its tables are in an object store (None on a filesystem)."""

    @property
    def shown(self) -> str:
        """The root as a person gave it: its URL for a root in an object store, else its path."""
        return self.url if self.url is not None else str(self.root)

    @property
    def clean(self) -> bool:
        """Whether nothing was found."""
        return not self.findings

    @property
    def needs_you(self) -> tuple[Finding, ...]:
        """The problems still there: nothing could repair them, or ``--repair`` was not given."""
        return tuple(f for f in self.findings if not f.repaired)

    @property
    def repaired(self) -> tuple[Finding, ...]:
        """The problems ``--repair`` dealt with."""
        return tuple(f for f in self.findings if f.repaired)


def relative(path: Path | str, root: Path) -> str:
    """``path`` as the report shows it: under the root when it is there; a URL whole."""
    if isinstance(path, str):
        return path
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
