"""``Artifact``: what ``run`` and ``resolve`` hand back for a step."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


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
        """The step's output: the path ``OUT`` stood for when the step ran."""
        return self.root / self.relative_path
