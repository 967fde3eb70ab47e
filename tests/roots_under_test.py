"""The root a test runs against: a directory, or with ``STEMMA_TEST_ROOT_STORE=s3`` a bucket.

``check`` runs the integration tests that drive whole runs through the public API (both front
doors, the CLI's history, materializing) a second time with every such root in a new bucket of
the local S3 server (``scripts/object-stores.sh``), as a user on S3 would: ``s3://{bucket}/root``
given wherever the directory is given otherwise, and the environment a user of that server sets.
A test that looks at files under its root (failure logs, staging, outputs) looks in the root's
local half (:func:`on_this_machine`), which is the root itself for a directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT_STORE_ENV = "STEMMA_TEST_ROOT_STORE"
"""``s3`` puts every root :func:`new_root` makes in a bucket of the local S3 server."""
S3_ENDPOINT = os.environ.get("STEMMA_TEST_S3_ENDPOINT", "http://127.0.0.1:9310")
S3_USER_ENV = {
    "AWS_ENDPOINT_URL": S3_ENDPOINT,
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_REGION": "us-east-1",
    "AWS_ALLOW_HTTP": "true",
}
"""What a user of the local S3 server sets (and nothing of stemma's own choosing)."""

Root = Path | str
"""A root as a user gives it: a directory, or a bucket's URL."""


def in_buckets() -> bool:
    """Whether this session's roots are buckets (``STEMMA_TEST_ROOT_STORE=s3``)."""
    store = os.environ.get(ROOT_STORE_ENV, "")
    if store not in ("", "s3"):
        raise pytest.UsageError(f"{ROOT_STORE_ENV} is 's3' or unset, not {store!r}")
    return store == "s3"


def new_root(base: Path, name: str = "root") -> Root:
    """A new, empty root: ``base / name``, or ``s3://{new bucket}/{name}`` in a bucket session."""
    if not in_buckets():
        return base / name
    from tests.storage.object_roots.conftest import make_bucket

    # What the runs, their workers and the CLI read; a bucket session's roots are all on S3.
    os.environ.update(S3_USER_ENV)
    return f"s3://{make_bucket(S3_ENDPOINT)}/{name}"


def below(root: Root, name: str) -> Root:
    """The root ``name`` below ``root``: a subdirectory, or a longer prefix in the same bucket."""
    return root / name if isinstance(root, Path) else f"{root}/{name}"


def on_this_machine(root: Root) -> Path:
    """Where ``root``'s files on this machine are: the directory, or a bucket root's local half."""
    from stemma.core.store.locations import resolve_root

    return resolve_root(root)
