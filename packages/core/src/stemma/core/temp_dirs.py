"""Directories stemma makes in the system's temp folder, and those a killed process left there.

A run keeps a few things outside its root: the local backend's worker markers
(``stemma-local-…``) and each curator's scratch folder (``stemma-curator-…``). They are removed
when their process ends, but a process that is killed (``kill -9``, the OOM killer, a hard
cancel's exit) cannot remove anything: a day of tests left about fifty. So each is named after
its host and process, ``stemma-{kind}-{host}-{pid}-{random}``, and the next process to make
one removes those of its host whose process is gone. Folders of the older, unnamed form
(``stemma-{kind}-{random}``) are removed once a day old: nothing says whose they are.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

from stemma.core.backends.worker_deaths import process_alive

LEGACY_AGE_SECONDS = 24 * 3600.0
"""An unnamed leftover older than this is removed (no process holds a folder that long idle)."""
_swept: set[str] = set()
"""Kinds this process has swept already: once per process is enough."""


def owned_temp_dir(kind: str) -> Path:
    """A new folder in the temp folder, named for this host and process; sweep leftovers first.

    Args:
        kind: what it is for (``local``, ``curator``): the name's second part.
    """
    if kind not in _swept:
        _swept.add(kind)
        sweep_leftovers(kind)
    return Path(tempfile.mkdtemp(prefix=f"stemma-{kind}-{host_tag()}-{os.getpid()}-"))


def sweep_leftovers(kind: str) -> list[Path]:
    """Remove this host's ``stemma-{kind}-…`` folders whose process is gone; return them.

    Never fails: a folder that cannot be read or removed is left for the next sweep.
    """
    base = Path(tempfile.gettempdir())
    prefix = f"stemma-{kind}-"
    mine = f"{prefix}{host_tag()}-"
    removed: list[Path] = []
    try:
        entries = [entry for entry in os.scandir(base) if entry.name.startswith(prefix)]
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        if entry.name.startswith(mine):
            pid = _pid(entry.name[len(mine) :])
            stale = pid is not None and pid != os.getpid() and not process_alive(pid)
        else:
            stale = _legacy(entry.name[len(prefix) :]) and _age(entry, now) > LEGACY_AGE_SECONDS
        if stale and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def host_tag() -> str:
    """This host's name as folder names carry it (its dashes made underscores)."""
    return socket.gethostname().replace("-", "_")  # (the name's parts are split on "-")


def _pid(rest: str) -> int | None:
    text = rest.split("-", 1)[0]
    return int(text) if text.isdigit() else None


def _legacy(rest: str) -> bool:
    """``tempfile``'s own random suffix alone: the form before names said whose."""
    return "-" not in rest


def _age(entry: os.DirEntry[str], now: float) -> float:
    try:
        return now - entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return 0.0
