"""``Artifact``: what ``run`` and ``resolve`` hand back for a step."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stemma.core.store.locations import RootLayout
from stemma.core.store.root_urls import output_url


@dataclass(frozen=True, kw_only=True)
class Artifact:
    """A built step: where its output is and what its function returned."""

    name: str
    """The step's name."""
    fingerprint: str
    """The step's key."""
    root: Path
    """The store root the output lives under."""
    relative_path: str
    """The output's path relative to ``root``."""
    artifact_id: str
    """The file-ref artifact id of the output (content hash with path and size)."""
    value: Any
    """What the step's function returned (decoded from its metric artifact on a cache hit)."""
    cached: bool
    """True when this run found the step already built and did not execute it."""
    type: str | None = None
    """The type recorded with the output (``apply(..., type="json")``), None without one.

    What the artifact was recorded with when it was made: a step found built keeps the type it
    was built with (a type is never part of a key), as ``lineage()`` and the dashboard show it.
    """

    def path(self) -> Path:
        """The step's output on this machine: the path ``OUT`` stood for when the step ran.

        A local path on every root (on a root in an object store, in its local half), so code
        that reads it with ``open`` or ``Path`` works unchanged; :meth:`url` is where it lasts.
        """
        return self.root / self.relative_path

    def url(self) -> str:
        """The step's output where it is durable, as a URL to hand other systems.

        On a root in an object store, where the output is kept in the bucket:
        ``s3://bucket/prefix/outputs/{name}/{version}-{key}`` (a prefix holding the files the
        step wrote under ``OUT``; for an output written as one file, the object holding it,
        ``…/.stemma-file``). On a root on a filesystem, :meth:`path` as a ``file://`` URL
        (spaces and non-ASCII percent-encoded). One small read (the root's marker) and one
        ``stat``; no request.
        """
        one_file = self.path().is_file()
        return output_url(RootLayout(self.root), self.relative_path, one_file=one_file)
