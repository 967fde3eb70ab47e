"""A function step's ``OUT`` directory kept in the bucket of a root in an object store.

A function writes its output into a directory on the machine that runs it (``OUT``, in the
root's local half), so code that writes with ``open``/``Path`` keeps working. The worker then
copies that directory to ``{root}/{output path}/`` in the bucket, each file with one put, and
writes the manifest ``{root}/{output path}/.stemma-output.json`` last, before the unit is
staged: an output whose manifest is there is whole, and the step's record, committed after it,
is the only thing that makes it the step's output. An attempt that died mid-copy left files and
no manifest; the next attempt writes over them. The keys are core's
:func:`~stemma.core.store.root_urls.output_key`, the objects ``artifact.url()`` and
``ctx.output_url`` name. An external runner's output is kept by the same call.

A machine that finds the step built in the tables but not its output on its own disk fetches
the output from the bucket (:func:`fetch_output`), so dependents and ``artifact.path()`` read a
local directory as on any root. A step that wrote nothing under ``OUT`` costs one put and, on
another machine, one get.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from stemma.core.crash_points import crash_point
from stemma.core.store import root_urls
from stemma.core.store.locations import RootLayout
from stemma.core.store.root_urls import output_key
from stemma.storage import object_roots
from stemma.storage.written_outputs import (
    clear_written,
    release_written,
    take_written,
    written_objects,
)

MANIFEST = ".stemma-output.json"
"""The object written last under an output's prefix: the files it holds, with their sizes."""
SINGLE_FILE = root_urls.SINGLE_FILE
"""The name under an output's prefix of an output written as one file (``OUT`` itself); core's,
so ``artifact.url()`` names the same object."""
_FORMAT = 1


def keep_output(layout: RootLayout, relative: str, written_at: str | None = None) -> None:
    """Copy the output directory ``relative`` (under the root) to the root's bucket.

    A no-op on a root on a filesystem. With ``written_at``, the attempt's prefix the step
    wrote under with its own tools (``OUT_URL``, :mod:`stemma.storage.written_outputs`): the
    files that came from there are copied inside the bucket rather than put again, and the
    prefix is emptied once the manifest is written.

    Raises:
        RootURLError: a put failed (the message names the root and what to check); the unit
            fails and its output is not recorded.
    """
    root = layout.store
    if root is None:
        return
    import obstore

    local = layout.output_dir(relative)
    if local.is_file():  # OUT written as one file: kept under a name of its own in the prefix
        files = [(SINGLE_FILE, local)]
    elif local.is_dir():
        found = sorted(p for p in local.rglob("*") if p.is_file())
        files = [(p.relative_to(local).as_posix(), p) for p in found]
    else:
        files = []
    store = object_roots.object_store(root)
    written = written_objects(layout, written_at) if written_at else {}
    listed: list[dict[str, Any]] = []
    try:
        for name, path in files:
            if name not in written or not _copied(store, written[name], output_key(relative, name)):
                obstore.put(store, output_key(relative, name), path)
            listed.append({"path": name, "size": path.stat().st_size})
        crash_point("out.copied")  # the files in the bucket, no manifest: not whole yet
        manifest = {"format": _FORMAT, "file": local.is_file(), "files": listed}
        obstore.put(store, output_key(relative, MANIFEST), json.dumps(manifest).encode())
        crash_point("out.kept")  # whole in the bucket; the unit is not staged yet
    except OSError:  # a local file could not be read: said as it is
        raise
    except Exception as err:
        raise object_roots.unreachable(root, err) from err
    if written_at:
        release_written(layout, written_at, written)


def _copied(store: Any, source: str, target: str) -> bool:
    """Copy an object inside the bucket (no bytes through this machine); False if refused.

    A store may refuse a copy it cannot make in one request (S3 copies at most 5 GB so): the
    caller then puts the file from this machine's copy instead.
    """
    import obstore

    try:
        obstore.copy(store, source, target)
    except Exception:
        return False
    return True


def holds_output(layout: RootLayout, relative: str) -> bool:
    """Whether the output ``relative`` is whole in the root's bucket (its manifest is there).

    One ``HEAD``, nothing fetched: what a dry run (``stemma plan``) asks of a step recorded
    built whose output is not on this machine. False on a root on a filesystem.

    Raises:
        RootURLError: the bucket cannot be read (other than the manifest being absent).
    """
    root = layout.store
    if root is None:
        return False
    import obstore

    try:
        obstore.head(object_roots.object_store(root), output_key(relative, MANIFEST))
    except FileNotFoundError:  # (obstore's not-found is this)
        return False
    except Exception as err:
        raise object_roots.unreachable(root, err) from err
    return True


def fetch_output(layout: RootLayout, relative: str) -> bool:
    """Bring the output ``relative`` from the bucket into the local half, if it is whole there.

    Returns:
        Whether the output is now in place locally (False: no manifest in the bucket, so the
        step is not built; a root on a filesystem has nothing to fetch).

    Raises:
        RootURLError: the bucket cannot be read (other than the manifest being absent).
    """
    root = layout.store
    if root is None:
        return False
    import obstore

    store = object_roots.object_store(root)
    try:
        manifest: dict[str, Any] = json.loads(
            bytes(obstore.get(store, output_key(relative, MANIFEST)).bytes())
        )
    except FileNotFoundError:  # (obstore's not-found is this)
        return False
    except Exception as err:
        raise object_roots.unreachable(root, err) from err
    final = layout.output_dir(relative)
    # Fetched beside its place, then renamed into it (the local half is a local directory):
    # a fetch cut short never leaves a half output where a dependent would take it for whole.
    partial = final.with_name(f".{final.name}.fetch-{uuid.uuid4().hex[:8]}")
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        if manifest.get("file"):
            data = obstore.get(store, output_key(relative, SINGLE_FILE)).bytes()
            partial.write_bytes(bytes(data))
        else:
            partial.mkdir()
        entries: list[dict[str, Any]] = [] if manifest.get("file") else manifest["files"]
        for entry in entries:
            name = str(entry["path"])
            target = partial / name
            target.parent.mkdir(parents=True, exist_ok=True)
            data = obstore.get(store, output_key(relative, name)).bytes()
            target.write_bytes(bytes(data))
        os.replace(partial, final)
    except FileExistsError:  # another process fetched it first
        _remove(partial)
    except OSError as err:
        _remove(partial)
        if final.exists():  # (another process fetched it first)
            return True
        raise err
    except Exception as err:
        _remove(partial)
        raise object_roots.unreachable(root, err) from err
    return final.exists()


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


class KeepsOutputs:
    """The calls a Delta store (and its worker half) answers for function steps' outputs.

    Shared by :class:`~stemma.storage.delta_store.DeltaStore` and
    :class:`~stemma.storage.worker_store.DeltaWorkerStore`, which keep their root's layout in
    ``_layout``; the engine finds them by name (``keep_output``, ``fetch_output``,
    ``holds_output``, ``clear_written``, ``take_written``).
    """

    _layout: RootLayout

    def keep_output(self, relative: str, written_at: str | None = None) -> None:
        """Copy a function step's output to the root's bucket (a no-op on a filesystem).

        Called by the worker after the function returned and before the unit is staged;
        ``written_at`` is the prefix the step was given as ``OUT_URL``, if it was.
        """
        keep_output(self._layout, relative, written_at)

    def clear_written(self, url: str) -> None:
        """Empty the prefix ``OUT_URL`` stands for, before the function is called."""
        clear_written(self._layout, url)

    def take_written(self, url: str, scratch: str) -> None:
        """Bring what the function put under ``OUT_URL`` into its scratch output."""
        take_written(self._layout, url, Path(scratch))

    def holds_output(self, relative: str) -> bool:
        """Whether a function step's output is whole in the root's bucket (nothing fetched)."""
        return holds_output(self._layout, relative)

    def fetch_output(self, relative: str) -> bool:
        """Bring a function step's output from the root's bucket to this machine, if it is there."""
        return fetch_output(self._layout, relative)
