"""A root given as a URL: ``file://`` a local path; ``s3://``, ``gs://``, ``az://`` object stores.

Every place a root is given (``root=``, ``$STEMMA_ROOT``, ``--root``, ``stemma tui ROOT``,
``Pipeline.create``) goes through :func:`~stemma.core.store.locations.resolve_root`, which asks
here first. A root that looks like a URL is never taken for a local path: ``gs://bucket/prefix``
once made a folder ``./gs:/bucket/prefix`` and ran there, silently. What this version cannot
keep in an object store is refused before anything is written, naming the root and the way out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from stemma.core.errors import RootURLError
from stemma.core.run_ids import new_attempt_id

if TYPE_CHECKING:
    from stemma.core.store.locations import RootLayout

OBJECT_SCHEMES = {"s3": "S3", "gs": "Google Cloud Storage", "az": "Azure Blob Storage"}
"""The object stores a root may name, by scheme."""
SUPPORTED_SCHEMES = ("file", *OBJECT_SCHEMES)
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass(frozen=True, kw_only=True)
class ObjectRoot:
    """A root in an object store: ``{scheme}://{bucket}/{prefix}``."""

    scheme: str
    """``s3``, ``gs`` or ``az``."""
    bucket: str
    """The bucket (an Azure container)."""
    prefix: str
    """The key prefix inside it, without leading or trailing ``/`` (empty: the bucket's top)."""

    @property
    def url(self) -> str:
        """The root as a URL, the form every message and record uses."""
        tail = f"/{self.prefix}" if self.prefix else ""
        return f"{self.scheme}://{self.bucket}{tail}"


def is_url(root: str) -> bool:
    """Whether ``root`` is written as a URL (``scheme://…``) rather than a path."""
    return _URL.match(root) is not None


def parse_root_url(root: str) -> Path | ObjectRoot:
    """What a root written as a URL names: a local path (``file://``) or an object-store root.

    Raises:
        RootURLError: the scheme is not one stemma knows, or the URL names no bucket (or, for
            ``file://``, another host); the message names the root and the forms accepted.
    """
    found = _URL.match(root)
    if found is None:
        raise ValueError(f"{root!r} is not a URL")
    scheme = found["scheme"].lower()
    if scheme not in SUPPORTED_SCHEMES:
        raise RootURLError(
            f"root {root!r}: {scheme}:// is not a kind of root stemma knows; give a local path "
            f"or a URL of {', '.join(f'{s}://' for s in SUPPORTED_SCHEMES)}"
        )
    parts = urlsplit(root)
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise RootURLError(
                f"root {root!r}: a file:// root is on this machine (file:///path); for a "
                f"shared one, give the path where it is mounted here"
            )
        return Path(unquote(parts.path))
    bucket = parts.netloc
    if not bucket:
        raise RootURLError(
            f"root {root!r} names no bucket: write it {scheme}://BUCKET/PREFIX "
            f"(the prefix may be empty)"
        )
    return ObjectRoot(scheme=scheme, bucket=bucket, prefix=parts.path.strip("/"))


def refuse_object_root(root: ObjectRoot, why: str) -> RootURLError:
    """The error for an object-store root this process cannot keep, saying ``why`` and the fix."""
    store = OBJECT_SCHEMES[root.scheme]
    return RootURLError(f"root {root.url!r} is in {store}: {why}; nothing was written")


SINGLE_FILE = ".stemma-file"
"""The object, under an output's prefix in a bucket, holding an output written as one file.

(Not the prefix itself: in a bucket with a hierarchical namespace, a key cannot be a file and
the folder of the output's manifest at once.)"""


def output_key(relative: str, name: str = "") -> str:
    """The key, under an object root's prefix, of the output recorded at ``relative``.

    With ``name``, the key of the object ``name`` inside it (a file of the output, its
    manifest, or :data:`SINGLE_FILE`). stemma-storage's output mirror writes and reads exactly
    these keys, and :func:`output_url` names them, so the URL a step or a user is told and the
    object in the bucket cannot disagree. Keys are the recorded path as it is, never
    percent-encoded: an object store keeps ``a b/é`` under that very key, and ``aws s3`` or
    ``gsutil`` take it so.
    """
    base = relative.strip("/")
    return f"{base}/{name}" if name else base


def output_url(layout: RootLayout, relative: str, *, one_file: bool = False) -> str:
    """Where the output recorded at ``relative`` is durable, as a URL other systems can read.

    On a root in an object store, the output's prefix in the bucket
    (``s3://bucket/prefix/outputs/…``), where stemma-storage keeps it; with ``one_file`` (the
    step wrote ``OUT`` as one file), the object holding that file. On a root on a filesystem,
    the output's absolute path as a ``file://`` URL (spaces and non-ASCII percent-encoded, as
    :meth:`pathlib.Path.as_uri` does). ``OUT`` and ``artifact.path()`` stay local paths.
    """
    store = layout.store
    if store is not None:
        return f"{store.url}/{output_key(relative, SINGLE_FILE if one_file else '')}"
    return layout.output_dir(relative).absolute().as_uri()


ATTEMPTS = "_stemma/attempts"
"""Where, under an object root's prefix, steps write with their own tools (``OUT_URL``): one
prefix per attempt, emptied once its output is kept, and left by an attempt that died for
``stemma vacuum`` to remove."""


def write_url(layout: RootLayout) -> str | None:
    """What ``OUT_URL`` stands for in a new attempt on this root.

    On a root in an object store, ``{root}/_stemma/attempts/{new id}``, a prefix no other
    attempt writes; None on a root on a filesystem (there ``OUT_URL`` is ``OUT``'s path).
    """
    store = layout.store
    return None if store is None else f"{store.url}/{ATTEMPTS}/{new_attempt_id()}"
