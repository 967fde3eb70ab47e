"""What a function step wrote with its own tools under ``OUT_URL``, on a root in a bucket.

A step given ``OUT_URL`` on a root in an object store is told a prefix of its own,
``{root}/_stemma/attempts/{attempt}`` (:func:`~stemma.core.store.root_urls.write_url`): no
other attempt writes there, so a step that dies half-way leaves its objects where no output
is, and a retry of the same unit starts from an empty prefix (:func:`clear_written`).

Once the function returns, the worker brings what it put there into the unit's scratch
directory (:func:`take_written`): objects under the prefix are the output's files, one object
at the prefix itself is an output written as one file. From there the output is what ``OUT``
would have made: the same bytes, so the same artifact id on any root, and a local copy on
this machine, as every output has. Keeping it (:func:`~stemma.storage.output_mirror.keep_output`)
then copies those objects inside the bucket, with no bytes through this machine, before the
manifest; the attempt's prefix is emptied after it. An attempt that died leaves its prefix,
which ``stemma vacuum`` removes once it is older than the retention (:func:`stale_attempts`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from stemma.core.store.locations import RootLayout
from stemma.core.store.root_urls import ATTEMPTS, SINGLE_FILE, ObjectRoot
from stemma.storage import object_roots
from stemma.storage.leftovers import Removal

_STREAM_CHUNK = 8 * 1024 * 1024


class WrittenOutputError(ValueError):
    """What a step wrote under ``OUT_URL`` cannot be its output as it stands."""


def written_objects(layout: RootLayout, url: str) -> dict[str, str]:
    """The objects under the attempt's prefix ``url``, by their name in the output.

    An object at the prefix itself is named :data:`SINGLE_FILE` (the output is that one
    file). One listing and one ``HEAD`` (of the prefix itself, so that an object there beside
    others under it is refused rather than left out).

    Raises:
        WrittenOutputError: the step put an object at the prefix and others under it.
        RootURLError: the bucket cannot be read.
    """
    key, listed, at_prefix = _listing(layout, url)
    found = _without_folder_markers(listed)
    if at_prefix and found:
        raise WrittenOutputError(
            f"the step wrote {url} as one object and also {len(found)} object(s) under "
            f"{url}/: write the output as one file at OUT_URL, or as files under it, not both"
        )
    return {SINGLE_FILE: key} if at_prefix else found


def _without_folder_markers(listed: dict[str, tuple[str, int]]) -> dict[str, str]:
    """The objects by name, less the empty ones that name a folder of others.

    A folder made by a console's "Create folder", Hadoop's S3A or ``rclone mkdir`` is an empty
    object whose key ends in ``/``; listed, it reads as a file of that folder's name, which the
    files under it could not then be written beside. (Such a marker stays under the attempt's
    prefix: ``object_store`` cannot name a key ending in ``/``, so nothing here can delete it.)
    """
    folders = {
        name.rsplit("/", depth)[0] for name in listed for depth in range(1, name.count("/") + 1)
    }
    return {
        name: path for name, (path, size) in listed.items() if not (size == 0 and name in folders)
    }


def clear_written(layout: RootLayout, url: str) -> None:
    """Delete whatever is at or under the attempt's prefix ``url`` (a retry's first try's).

    Everything stemma can name: an object at the prefix beside others under it too, which
    :func:`written_objects` would refuse (not a folder marker, a key ending in ``/``, which
    ``object_store`` cannot name, and :func:`written_objects` leaves out).
    """
    key, listed, at_prefix = _listing(layout, url)
    _delete(layout, url, [path for path, _ in listed.values()] + ([key] if at_prefix else []))


def _listing(layout: RootLayout, url: str) -> tuple[str, dict[str, tuple[str, int]], bool]:
    """The attempt's key, its objects by name below it (key and size), and whether one is at it."""
    root, key = _attempt(layout, url)
    import obstore

    store = object_roots.object_store(root)
    listed: dict[str, tuple[str, int]] = {}
    try:
        for batch in obstore.list(store, f"{key}/"):
            for meta in batch:
                path = str(meta["path"])
                if path != key:  # (a folder marker "…/{id}/" for the prefix itself)
                    listed[path.removeprefix(f"{key}/")] = (path, int(meta["size"]))
        return key, listed, _exists(store, key)
    except Exception as err:
        raise object_roots.unreachable(root, err) from err


def take_written(layout: RootLayout, url: str, scratch: Path) -> None:
    """Bring the objects the step put under ``url`` into its scratch output ``scratch``.

    Streamed to disk in chunks: an output of gigabytes is never held in memory.

    Raises:
        WrittenOutputError: a name is both under ``OUT`` and under ``OUT_URL``, or the
            step wrote ``OUT`` as one file and objects under ``OUT_URL``.
        RootURLError: the bucket cannot be read.
    """
    objects = written_objects(layout, url)
    if not objects:
        return
    root, _ = _attempt(layout, url)
    import obstore

    store = object_roots.object_store(root)
    single = SINGLE_FILE in objects
    if scratch.exists() if single else scratch.is_file():
        raise WrittenOutputError(
            f"the step wrote its output both at OUT ({scratch}) and at OUT_URL ({url}); "
            "write it at one of them"
        )
    for name, source in sorted(objects.items()):
        target = scratch if single else scratch / name
        if target.exists():
            raise WrittenOutputError(
                f"the step wrote {name!r} both under OUT and under OUT_URL ({url}); write "
                "each file at one of them"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with target.open("wb") as out:
                for chunk in obstore.get(store, source).stream(min_chunk_size=_STREAM_CHUNK):
                    out.write(memoryview(chunk))
        except OSError:
            raise
        except Exception as err:
            raise object_roots.unreachable(root, err) from err


def release_written(layout: RootLayout, url: str, objects: dict[str, str]) -> None:
    """Empty the attempt's prefix once its output is kept (a failure here loses nothing)."""
    try:
        _delete(layout, url, list(objects.values()))
    except Exception:
        return  # left for `stemma vacuum`, which removes a stale attempt's objects


def stale_attempts(layout: RootLayout, cutoff: dt.datetime) -> list[Removal]:
    """The objects under ``_stemma/attempts/`` last written before ``cutoff``.

    An attempt's objects live only while its step runs: any older than the retention were
    left by an attempt that died (or whose prefix could not be emptied). None on a filesystem.
    """
    root = layout.store
    if root is None:
        return []
    import obstore

    limit = cutoff.timestamp()
    found: list[Removal] = []
    try:
        for batch in obstore.list(object_roots.object_store(root), f"{ATTEMPTS}/"):
            for meta in batch:
                if meta["last_modified"].timestamp() < limit:
                    url = f"{root.url}/{meta['path']}"
                    found.append(Removal(kind="attempts", path=url, size=int(meta["size"])))
    except Exception as err:
        raise object_roots.unreachable(root, err) from err
    return sorted(found, key=lambda removal: str(removal.path))


def _attempt(layout: RootLayout, url: str) -> tuple[ObjectRoot, str]:
    root = _root(layout)
    key = url.removeprefix(f"{root.url}/")
    if key == url or not key.startswith(f"{ATTEMPTS}/"):
        raise WrittenOutputError(f"{url} is not an attempt's prefix under the root {root.url}")
    return root, key


def _root(layout: RootLayout) -> ObjectRoot:
    root = layout.store
    if root is None:
        raise WrittenOutputError(f"the root {layout.shown} is not in an object store")
    return root


def _exists(store: Any, key: str) -> bool:
    import obstore

    try:
        obstore.head(store, key)
    except FileNotFoundError:
        return False
    return True


def _delete(layout: RootLayout, url: str, keys: list[str]) -> None:
    root, _ = _attempt(layout, url)
    object_roots.delete_objects(root, [f"{root.url}/{key}" for key in keys])
