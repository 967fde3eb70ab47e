"""Whether another user could have written a file stemma is about to unpickle.

Unpickling runs code, so a pickle is only as trustworthy as whoever can write it. A root on a
cluster filesystem is often shared with a group; stemma reads pickles from its ``logs/slurm``
folders (submitit's results, ``slurm-intra``'s step results). Before such a read,
:func:`warn_if_writable_by_others` warns once per place when the file, its folder or any folder
above it could be changed by another user (docs/design/0016-security.md says why it warns
rather than refuses).

A folder is safe when it is owned by this user or root and neither the group (unless it is the
user's own private group) nor others can write it; a world-writable sticky folder (``/tmp``) is
safe too, for the entries below it are this user's and no one else may rename them.
"""

from __future__ import annotations

import functools
import grp
import os
import pwd
import stat
import warnings
from pathlib import Path


class WritableByOthersWarning(UserWarning):
    """A pickle stemma loads lies where another user could have written it."""


def writable_by_others(path: Path) -> Path | None:
    """The first of ``path`` and its parent folders another user could change; or None."""
    path = Path(os.path.abspath(path))
    try:
        if _unsafe(path.stat(), sticky_ok=False):
            return path
    except OSError:
        return None  # missing: its reader reports that
    return next((p for p in path.parents if _folder_unsafe(str(p))), None)


def warn_if_writable_by_others(path: Path, *, what: str) -> None:
    """Warn (once per place) that ``what`` at ``path`` could have been written by another user.

    Args:
        path: the file about to be loaded.
        what: what it is, for the message (``"a SLURM job's result"``).
    """
    found = writable_by_others(path)
    if found is not None and str(found) not in _WARNED:
        _WARNED.add(str(found))
        _warn(str(found), what)


_WARNED: set[str] = set()
"""Places already warned about: one warning per place and process, whatever is loaded there."""


def _warn(place: str, what: str) -> None:
    warnings.warn(
        f"{place} can be written by another user, and stemma is about to load {what} "
        f"(a Python pickle, which can run code) from below it; make it yours alone with "
        f"`chmod go-w {place}` (and chown it if another user owns it), or use a root of your own",
        WritableByOthersWarning,
        stacklevel=3,
    )


@functools.cache
def _folder_unsafe(folder: str) -> bool:
    """Cached: folders above a root do not change during a run, and there are many loads."""
    try:
        return _unsafe(os.stat(folder), sticky_ok=True)
    except OSError:
        return False


def _unsafe(info: os.stat_result, *, sticky_ok: bool) -> bool:
    if info.st_uid not in (os.getuid(), 0):
        return True
    if sticky_ok and info.st_mode & stat.S_ISVTX:
        return False
    if info.st_mode & stat.S_IWOTH:
        return True
    return bool(info.st_mode & stat.S_IWGRP) and not _private_group(info.st_gid)


@functools.cache
def _private_group(gid: int) -> bool:
    """Whether ``gid`` is this user's own group (named after the user, no other member)."""
    if gid != os.getgid():
        return False
    try:
        group, user = grp.getgrgid(gid), pwd.getpwuid(os.getuid())
    except KeyError:
        return False
    return group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}
