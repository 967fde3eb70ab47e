"""Roots in real object stores: the servers ``scripts/object-stores.sh start`` runs on 127.0.0.1.

S3 (moto's server) and Azure Blob Storage (Azurite). Each test gets a bucket (a container) of its
own and the environment a user of that server would set: the endpoint, a key pair, plain HTTP.
No test here is skipped when a server is missing: it fails, saying how to start it
(``python3 scripts/dev.py check`` starts them before the tests).

GCS is here only as a root to read (``test_gcs_reads.py``): no emulator the registries carry
takes ``object_store``'s uploads (fake-gcs-server has no XML API for a PUT,
fsouza/fake-gcs-server#331); docs/how-to/object-store-roots.md lists each one tried.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import os
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import obstore
import pytest

from stemma.core.store.root_urls import ObjectRoot, parse_root_url
from stemma.storage import object_roots

S3_ENDPOINT = os.environ.get("STEMMA_TEST_S3_ENDPOINT", "http://127.0.0.1:9310")
AZURITE_ENDPOINT = os.environ.get(
    "STEMMA_TEST_AZURITE_ENDPOINT", "http://127.0.0.1:10000/devstoreaccount1"
)
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (  # Azurite's well-known development key (public, in Microsoft's docs)
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def make_bucket(endpoint: str) -> str:
    """A new, empty bucket on the local S3 server; fails the test when none answers."""
    name = f"stemma-{uuid.uuid4().hex[:16]}"
    _created(urllib.request.Request(f"{endpoint}/{name}", method="PUT"), 200, "the S3 server")
    return name


def _created(request: urllib.request.Request, status: int, server: str) -> None:
    """Send ``request``, which makes a bucket; fail the test, saying how to start ``server``."""
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == status, reply.status
    except (urllib.error.URLError, OSError) as err:
        pytest.fail(
            f"{server} does not answer at {request.full_url} ({err}): start it with "
            "`bash scripts/object-stores.sh start` (dev.py check and test do)"
        )


def user_env(monkeypatch: pytest.MonkeyPatch, endpoint: str, **variables: str) -> str:
    """Set what a user of a store sets (and nothing of stemma's own choosing); ``endpoint``."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("STEMMA_STORAGE_OPTIONS", raising=False)
    monkeypatch.delenv("STEMMA_STORE", raising=False)
    return endpoint


@pytest.fixture
def s3_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """The environment a user of the local S3 server sets; returns its endpoint."""
    return user_env(
        monkeypatch,
        S3_ENDPOINT,
        AWS_ENDPOINT_URL=S3_ENDPOINT,
        AWS_ACCESS_KEY_ID="test",
        AWS_SECRET_ACCESS_KEY="test",
        AWS_REGION="us-east-1",
        AWS_ALLOW_HTTP="true",
    )


def make_container(endpoint: str) -> str:
    """A new container on Azurite, made with one request signed with the account's key."""
    name = f"stemma-{uuid.uuid4().hex[:16]}"
    now = dt.datetime.now(dt.UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")
    version = "2021-08-06"
    signed = (
        "PUT\n" + "\n" * 11 + f"x-ms-date:{now}\nx-ms-version:{version}\n"
        f"/{AZURITE_ACCOUNT}/{AZURITE_ACCOUNT}/{name}\nrestype:container"
    )
    key = base64.b64decode(AZURITE_KEY)
    signature = base64.b64encode(hmac.new(key, signed.encode(), hashlib.sha256).digest()).decode()
    request = urllib.request.Request(
        f"{endpoint}/{name}?restype=container",
        method="PUT",
        headers={
            "x-ms-date": now,
            "x-ms-version": version,
            "Authorization": f"SharedKey {AZURITE_ACCOUNT}:{signature}",
            "Content-Length": "0",
        },
    )
    _created(request, 201, "Azurite")
    return name


@pytest.fixture
def az_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """The environment a user of Azurite sets; returns its endpoint."""
    return user_env(
        monkeypatch,
        AZURITE_ENDPOINT,
        AZURE_STORAGE_USE_EMULATOR="true",
        AZURITE_BLOB_STORAGE_URL=AZURITE_ENDPOINT.rsplit("/", 1)[0],
        AZURE_STORAGE_ACCOUNT_NAME=AZURITE_ACCOUNT,
        AZURE_STORAGE_ACCOUNT_KEY=AZURITE_KEY,
    )


@pytest.fixture(params=["s3", "az"])
def bucket_root(request: pytest.FixtureRequest) -> str:
    """A root in a new bucket of each store: ``s3://stemma-…/root``, ``az://stemma-…/root``."""
    if request.param == "s3":
        return f"s3://{make_bucket(request.getfixturevalue('s3_env'))}/root"
    return f"az://{make_container(request.getfixturevalue('az_env'))}/root"


@pytest.fixture
def s3_root(s3_env: str) -> str:
    """A root at the top of a new bucket's ``root/`` prefix: ``s3://stemma-…/root``."""
    return f"s3://{make_bucket(s3_env)}/root"


def bucket_keys(root: str, *, endpoint: str | None = None) -> list[str]:
    """Every key under ``root``, relative to it (read with obstore, as the store reads)."""
    from obstore.store import from_url

    if endpoint is None:
        store = from_url(root)
    else:
        store = from_url(root, endpoint=endpoint, client_options={"allow_http": True})
    return sorted(str(meta["path"]) for batch in obstore.list(store) for meta in batch)


def bucket_and_key(url: str) -> tuple[ObjectRoot, str]:
    """The bucket a URL names (as a root at its top) and the key it names in it."""
    found = parse_root_url(url)
    assert isinstance(found, ObjectRoot), url
    return ObjectRoot(scheme=found.scheme, bucket=found.bucket, prefix=""), found.prefix


def objects_under(url: str) -> dict[str, bytes]:
    """Every object under the prefix ``url`` names, by its name below it, with its bytes."""
    bucket, prefix = bucket_and_key(url)
    store = object_roots.object_store(bucket)
    names = [str(m["path"]) for batch in obstore.list(store, prefix=f"{prefix}/") for m in batch]
    return {
        name.removeprefix(f"{prefix}/"): bytes(obstore.get(store, name).bytes()) for name in names
    }


def object_bytes(url: str) -> bytes:
    """The bytes of the object ``url`` names."""
    bucket, key = bucket_and_key(url)
    return bytes(obstore.get(object_roots.object_store(bucket), key).bytes())


def local_files(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory``, by its path below it, with its bytes."""
    found = sorted(p for p in directory.rglob("*") if p.is_file())
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in found}
