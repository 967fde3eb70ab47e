"""Where things live under a stemma root (docs/concepts/store.md), in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROOT = ".stemma"
ROOT_ENV = "STEMMA_ROOT"


def resolve_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The root to use: the argument, else ``$STEMMA_ROOT``, else ``.stemma`` in the cwd."""
    if root is not None:
        return Path(root).absolute()
    env = os.environ.get(ROOT_ENV)
    return Path(env).absolute() if env else Path(DEFAULT_ROOT).absolute()


@dataclass(frozen=True)
class RootLayout:
    """The directories under one root. Creating the layout does no I/O; ``ensure`` does."""

    root: Path

    @property
    def delta(self) -> Path:
        """Delta tables: ``delta/{artifacts,provenance,orchestration}/…``."""
        return self.root / "delta"

    @property
    def staging(self) -> Path:
        """Worker staging: Parquet per table, ``executions.parquet`` last."""
        return self.root / "staging"

    @property
    def working(self) -> Path:
        """Sandboxes of running executions."""
        return self.root / "working"

    @property
    def outputs(self) -> Path:
        """Function steps' ``OUT`` directories."""
        return self.root / "outputs"

    @property
    def locks(self) -> Path:
        """Step leases: one runner at a time executes a given fingerprint."""
        return self.root / "locks"

    @property
    def logs(self) -> Path:
        """Failure and scheduler logs."""
        return self.root / "logs"

    @property
    def runs(self) -> Path:
        """Live state of running pipelines."""
        return self.root / "runs"

    def output_dir(self, relative: str) -> Path:
        """The absolute path of an output recorded relative to the root."""
        return self.root / relative

    def unwritable(self) -> Path | None:
        """The first place under the root a run writes that this process cannot; or None.

        The root itself (or, while it does not exist, the directory it would be made in), then
        those of its directories a run writes into that exist. ``os.access`` answers for this
        process's user and for read-only mounts alike, and writes nothing.
        """
        existing = self.root
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent
        if not _writable(existing):
            return existing
        if existing != self.root:
            return None
        places = (self.locks, self.staging, self.runs, self.logs, self.outputs, self.delta)
        return next((p for p in places if p.exists() and not _writable(p)), None)

    def ensure(self) -> None:
        """Create the directories every store and runner expects."""
        for path in (self.staging, self.outputs, self.locks, self.logs):
            path.mkdir(parents=True, exist_ok=True)


def _writable(directory: Path) -> bool:
    effective = os.access in os.supports_effective_ids
    return os.access(directory, os.W_OK | os.X_OK, effective_ids=effective)


def write_readable_log(path: Path, lines: list[str]) -> Path | None:
    """Write a log a human reads (a failure log, a staging note); best effort.

    A log that cannot be written must never turn a unit's failure or a commit into another
    fault, so ``OSError`` is swallowed.

    Returns:
        ``path``, or ``None`` when it could not be written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
    except OSError:
        return None
    return path
