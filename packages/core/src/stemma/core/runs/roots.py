"""``existing_root``: the root a reading command works on, refused when it is not one.

Light on purpose (the layout and the exit codes only): every package's commands import it,
and ``stemma tui`` must start without loading the store, polars or pydantic.
"""

from __future__ import annotations

import os
from pathlib import Path

from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.store.local_half import MARKER
from stemma.core.store.locations import DEFAULT_ROOT, ROOT_ENV, resolve_root

ROOT_MARKS = ("runs", "delta", "core.sqlite", "staging", "outputs", MARKER)
"""What a stemma root holds once anything ran on it (any one of them; ``core.sqlite`` is the
SQLite store's file, ``sqlite_store.schema.DATABASE_FILE``, named here to keep this light). A
root in an object store is one as soon as it is named: its local half holds the marker, and
what ran there is in the bucket."""


def existing_root(value: str | os.PathLike[str] | None) -> Path:
    """The root a reading command works on, which must exist and be a stemma root.

    A mistyped ``--root`` or ``$STEMMA_ROOT`` would otherwise read as an empty root: no runs, no
    artifacts, exit 0.

    Raises:
        CliError: (``NOT_FOUND``) nothing is there, it is a file, or a directory that holds
            nothing stemma writes; the message says where the root was looked for and why.
    """
    root = resolve_root(value)
    if value is not None:
        source = "given on the command line"
    elif os.environ.get(ROOT_ENV):
        source = f"${ROOT_ENV}"
    else:
        source = f"the default root, {DEFAULT_ROOT} in the current directory"
    fix = f"pass --root DIR or set ${ROOT_ENV} to the root your runs write to"
    shown = str(root) if str(root).isprintable() else repr(str(root))  # one line, always
    try:
        kind = "file" if root.is_file() else "dir" if root.is_dir() else None
        marked = kind == "dir" and any((root / mark).exists() for mark in ROOT_MARKS)
    except OSError as err:  # a name too long for the filesystem, a folder not ours to read
        raise CliError(
            f"cannot read a stemma root at {shown} ({source}): {err.strerror}; {fix}",
            ExitCode.NOT_FOUND,
        ) from None
    if kind == "file":
        raise CliError(
            f"{shown} ({source}) is a file, not a stemma root; {fix}", ExitCode.NOT_FOUND
        )
    if kind is None:
        raise CliError(f"there is no stemma root at {shown} ({source}); {fix}", ExitCode.NOT_FOUND)
    if not marked:
        raise CliError(
            f"{shown} ({source}) is not a stemma root: it has none of "
            f"{', '.join(ROOT_MARKS)}; {fix}",
            ExitCode.NOT_FOUND,
        )
    return root
