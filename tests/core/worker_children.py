"""The local pool's worker processes of this process, read from /proc."""

from __future__ import annotations

import os
import pathlib


def spawned_workers() -> set[int]:
    """This process's live children started by multiprocessing's spawn (its pools' workers).

    The resource tracker, also a child, runs another module and is not counted.
    """
    me = str(os.getpid())
    found: set[int] = set()
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            command = (entry / "cmdline").read_bytes()
        except OSError:  # it ended while we looked
            continue
        if parent == me and state != "Z" and b"spawn_main" in command:
            found.add(int(entry.name))
    return found
