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
from urllib.parse import unquote, urlsplit

from stemma.core.errors import RootURLError

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
