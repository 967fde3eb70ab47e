"""The local half of a root kept in an object store: its state directory on this machine.

A root at ``s3://bucket/prefix`` keeps what is durable (the Delta tables) in the bucket, and
what is live on this machine's disk, where reading it costs no request: run states and
control requests (so ``stemma runs`` and the dashboard over SSH stay instant), step leases,
sandboxes, the staging of this machine's workers until it is committed, and detached runs'
logs. That directory is the root every local part of stemma is given (``RootLayout.root``); a
small marker in it, ``object-root.json``, names the store it belongs to, so a worker, a
command or the dashboard handed the directory finds the bucket without being told.

Where it is: ``{base}/{scheme}-{bucket}-{prefix}-{hash}``, one directory per root URL, under
``$STEMMA_STATE_DIR`` when set (node-local scratch, say), else under
``$XDG_STATE_HOME/stemma/roots`` (``~/.local/state/stemma/roots`` when ``XDG_STATE_HOME`` is
unset): per user, per machine, per root.

The marker holds the URL only, never a credential: those come from the environment each time
(the cloud's own chain, and ``$STEMMA_STORAGE_OPTIONS``; see stemma-storage's
``object_roots``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from stemma.core.errors import RootURLError
from stemma.core.store.root_urls import ObjectRoot, parse_root_url

STATE_DIR_ENV = "STEMMA_STATE_DIR"
MARKER = "object-root.json"
"""The file in a state directory naming the object-store root it is the local half of."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def state_dir_for(root: ObjectRoot) -> Path:
    """Where ``root``'s local half lives on this machine (nothing is created)."""
    named = os.environ.get(STATE_DIR_ENV)
    if named:
        base = Path(named)
    else:
        home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        base = Path(home) / "stemma" / "roots"
    slug = _UNSAFE.sub("-", f"{root.scheme}-{root.bucket}-{root.prefix}").strip("-")[:60]
    digest = hashlib.sha256(root.url.encode()).hexdigest()[:10]
    return base.expanduser().absolute() / f"{slug}-{digest}"


def local_half(root: ObjectRoot) -> Path:
    """``root``'s state directory, made and marked as its own if it is not yet.

    Raises:
        RootURLError: the directory cannot be made, or is another root's (a directory copied
            by hand); the message names it and the fix.
    """
    directory = state_dir_for(root)
    found = object_root_of(directory)
    if found is not None and found.url != root.url:
        raise RootURLError(
            f"root {root.url!r}: its state directory {directory} is the local half of "
            f"{found.url!r}; remove it (it holds only this machine's live state)"
        )
    if found is None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            _write_marker(directory / MARKER, root)
        except OSError as err:
            raise RootURLError(
                f"root {root.url!r}: its state directory {directory} cannot be made "
                f"({err.strerror or err}); set ${STATE_DIR_ENV} to a directory you can write"
            ) from err
    return directory


def object_root_of(directory: Path) -> ObjectRoot | None:
    """The object-store root ``directory`` is the local half of, or None (a local root)."""
    try:
        text = (directory / MARKER).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:  # unreadable: the caller's own reads of the directory say so
        return None
    try:
        found = parse_root_url(str(json.loads(text)["root"]))
    except (ValueError, KeyError, TypeError):
        return None
    return found if isinstance(found, ObjectRoot) else None


def _write_marker(path: Path, root: ObjectRoot) -> None:
    # Written whole under a temporary name and renamed: two processes opening the root at once
    # never see half a marker (the directory is local, so the rename is atomic).
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps({"root": root.url}) + "\n", encoding="utf-8")
    os.replace(partial, path)
