"""Provenance: git commit, user, host, time and command line, captured once per lowering."""

from __future__ import annotations

import datetime as dt
import getpass
import os
import socket
import sys
from pathlib import Path

from stemma.core.records import Provenance


def capture_provenance() -> Provenance:
    """Describe who is lowering a graph, from where, now."""
    return Provenance(
        git_commit=git_commit(Path.cwd()),
        user=current_user(),
        host=socket.gethostname(),
        created_at=dt.datetime.now(dt.UTC),
        command_line=tuple(sys.argv),
    )


def current_user() -> str:
    """The login name of whoever runs this process (the uid when it has no name)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry, as in some containers
        return str(os.getuid())


def git_commit(start: Path) -> str | None:
    """The commit checked out in the repository containing ``start``, read from ``.git``.

    Reads files instead of running ``git`` so lowering stays fast and works without git
    installed; never cached, so a long-lived process records the commit of the moment.
    Returns ``None`` outside a repository or on an unborn branch.
    """
    for directory in (start, *start.parents):
        git = directory / ".git"
        if git.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = git.read_text().strip()
            if text.startswith("gitdir:"):
                git = (directory / text.removeprefix("gitdir:").strip()).resolve()
        if git.is_dir():
            return _read_head(git)
    return None


def _read_head(git: Path) -> str | None:
    try:
        head = (git / "HEAD").read_text().strip()
    except OSError:
        return None
    if not head.startswith("ref:"):
        return head or None
    ref = head.removeprefix("ref:").strip()
    common = git
    commondir = git / "commondir"
    if commondir.is_file():
        common = (git / commondir.read_text().strip()).resolve()
    for base in (git, common):
        loose = base / ref
        if loose.is_file():
            return loose.read_text().strip() or None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text().splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
    return None
