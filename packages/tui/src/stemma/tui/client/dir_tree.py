"""The folders a fixed depth below a folder, listed again only where something changed.

A running step of 10,000 units has about as many staged bundles, one folder each three levels
below its staging folder (``{ab}/{cd}/{id}``): listing them all each refresh took ~0.5 s. A
folder's modification time changes when an entry is added or removed, so a folder whose time
is unchanged keeps its last listing, and a refresh costs one ``stat`` per folder instead of
one listing (~20 ms for 10,000 bundles). A folder changed in the last second is listed again
anyway: a filesystem's clock ticks coarsely (ext4: milliseconds, NFS: its attribute cache),
so two changes in one tick leave the same time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

RECENT_SECONDS = 1.0
"""A folder changed this recently is listed again whatever its time says."""


class DirTree:
    """The folders ``depth`` levels below ``base``; :meth:`leaves` catches up on each call.

    Tolerates folders removed while it looks (a committer takes bundles away).
    """

    def __init__(self, base: Path, depth: int) -> None:
        """List the folders ``depth`` levels below ``base``."""
        self.base = str(base)
        self.depth = depth
        self._listed: dict[str, tuple[int, list[str]]] = {}
        self.listings = 0
        """Folders listed so far (how a test tells a cached refresh from a full one)."""

    def leaves(self) -> list[str]:
        """The folders ``depth`` levels below the base, as of now.

        Paths as strings: making 10,000 ``Path`` objects cost more than the ``stat`` calls.
        """
        visited: dict[str, tuple[int, list[str]]] = {}
        level = [self.base]
        for _ in range(self.depth):
            level = [child for folder in level for child in self._children(folder, visited)]
        self._listed = visited  # forgets the folders gone
        return level

    def _children(self, folder: str, visited: dict[str, tuple[int, list[str]]]) -> list[str]:
        try:
            stamp = os.stat(folder).st_mtime_ns
        except OSError:
            return []
        known = self._listed.get(folder)
        recent = time.time() - stamp / 1e9 < RECENT_SECONDS
        if known is None or known[0] != stamp or recent:
            try:
                with os.scandir(folder) as entries:
                    children = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
            except OSError:
                return []
            self.listings += 1
            known = (stamp, children)
        visited[folder] = known
        return known[1]
