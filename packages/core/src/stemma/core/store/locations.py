"""Where things live under a stemma root (docs/concepts/store.md), in one place."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from stemma.core import plugins
from stemma.core.errors import NotARootError
from stemma.core.store.local_half import local_half, object_root_of
from stemma.core.store.root_urls import ObjectRoot, is_url, parse_root_url, refuse_object_root

DEFAULT_ROOT = ".stemma"
ROOT_ENV = "STEMMA_ROOT"
STORE_ENV = "STEMMA_STORE"
"""The store kind to open (``stemma.core.store.opening`` reads it too)."""


def resolve_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The root to use: the argument, else ``$STEMMA_ROOT``, else ``.stemma`` in the cwd.

    A root written as a URL is read as one (:mod:`~stemma.core.store.root_urls`): ``file://``
    names a local path; an object store's (``s3://``, ``gs://``, ``az://``) is kept by
    stemma-storage, and the path returned is its local half on this machine
    (:mod:`~stemma.core.store.local_half`), made and marked on first use.

    Raises:
        RootURLError: the root is a URL that cannot be used here: an unknown scheme, no bucket,
            an object store without stemma-storage installed, a state directory another root
            owns (the message names the root and what to give instead).
    """
    given = os.fspath(root) if root is not None else os.environ.get(ROOT_ENV) or DEFAULT_ROOT
    if is_url(given):
        found = parse_root_url(given)
        if isinstance(found, ObjectRoot):
            return _local_half_of(found)
        return found.absolute()
    return Path(given).absolute()


def _local_half_of(root: ObjectRoot) -> Path:
    """The local half of ``root``, once it is known the Delta store can keep the rest."""
    if "delta" not in plugins.registered(plugins.STORES):
        raise refuse_object_root(
            root, "stemma-core alone keeps roots on a filesystem; pip install stemma-storage"
        )
    chosen = os.environ.get(STORE_ENV)
    if chosen and chosen != "delta":
        raise refuse_object_root(
            root, f"${STORE_ENV}={chosen} keeps roots on a filesystem; unset it (or set delta)"
        )
    return local_half(root)


def usable_root(root: str | os.PathLike[str] | None = None) -> Path:
    """:func:`resolve_root`'s root, refused when it is a file or lies under one.

    A few ``stat`` calls; nothing is created. A root that does not exist yet is fine (a run
    makes it); one that cannot be written is answered read-only by the store.

    Raises:
        NotARootError: the root, or the nearest of its parents that exists, is a file; the
            message names it and where the root came from.
    """
    path = resolve_root(root)
    try:
        existing = path
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent
        is_file = existing.exists() and not existing.is_dir()
    except OSError:  # (a name too long for the filesystem: what opens it says so)
        return path
    if not is_file:
        return path
    if root is not None:
        source = "given as root"
    elif os.environ.get(ROOT_ENV):
        source = f"${ROOT_ENV}"
    else:
        source = f"the default root, {DEFAULT_ROOT} in the current directory"
    fix = f"give root= a directory (one that does not exist yet is made) or set ${ROOT_ENV}"
    if existing == path:
        raise NotARootError(f"{path} is a file, not a stemma root ({source}); {fix}")
    raise NotARootError(
        f"{path} cannot be a stemma root ({source}): {existing} is a file, not a directory; {fix}"
    )


@dataclass(frozen=True)
class RootLayout:
    """The directories under one root. Creating the layout does no I/O; ``ensure`` does."""

    root: Path
    """Where the root is on this machine: the root itself, or an object root's local half."""

    @functools.cached_property
    def store(self) -> ObjectRoot | None:
        """The object-store root this is the local half of; None for a root on a filesystem.

        Read once per layout from the marker in :attr:`root` (one small read, or one failed
        ``open``); a store on it keeps its tables there and nothing durable under ``root``.
        """
        return object_root_of(self.root)

    @property
    def shown(self) -> str:
        """The root as a person gave it: its URL for an object root, else its path."""
        return self.store.url if self.store is not None else str(self.root)

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
