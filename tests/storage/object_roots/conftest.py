"""Roots in a real object store: the S3 server ``scripts/object-stores.sh start`` runs on 127.0.0.1.

Each test gets a bucket of its own (made with one anonymous ``PUT``, which the local server
allows) and the environment a user of that server would set: the endpoint, a key pair, plain
HTTP. No test here is skipped when the server is missing: it fails, saying how to start it
(``python3 scripts/dev.py check`` starts it before the tests).
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
import uuid

import pytest

S3_ENDPOINT = os.environ.get("STEMMA_TEST_S3_ENDPOINT", "http://127.0.0.1:9310")


def make_bucket(endpoint: str) -> str:
    """A new, empty bucket on the local S3 server; fails the test when none answers."""
    name = f"stemma-{uuid.uuid4().hex[:16]}"
    request = urllib.request.Request(f"{endpoint}/{name}", method="PUT")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == 200, reply.status
    except (urllib.error.URLError, OSError) as err:
        pytest.fail(
            f"no S3 server answers at {endpoint} ({err}): start it with "
            "`bash scripts/object-stores.sh start` (dev.py check and test do)"
        )
    return name


@pytest.fixture
def s3_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """The environment a user of the local S3 server sets; returns its endpoint."""
    for name, value in {
        "AWS_ENDPOINT_URL": S3_ENDPOINT,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("STEMMA_STORAGE_OPTIONS", raising=False)
    monkeypatch.delenv("STEMMA_STORE", raising=False)
    return S3_ENDPOINT


@pytest.fixture
def s3_root(s3_env: str) -> str:
    """A root at the top of a new bucket's ``root/`` prefix: ``s3://stemma-…/root``."""
    return f"s3://{make_bucket(s3_env)}/root"


def bucket_keys(root: str) -> list[str]:
    """Every key under ``root``, relative to it (read with obstore, as the store reads)."""
    import obstore
    from obstore.store import from_url

    store = from_url(root)
    return sorted(str(meta["path"]) for batch in obstore.list(store) for meta in batch)
