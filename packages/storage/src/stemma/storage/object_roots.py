"""A root's tables in an object store: where they are, the options to reach them, one check.

A root given as ``s3://bucket/prefix`` (``gs://``, ``az://``) keeps its Delta tables at
``{root}/delta/{table}``, read and written by delta-rs and polars over the Rust
``object_store`` crate, and listed by ``obstore`` (the same crate's Python binding), so one
set of options reaches the bucket from all three. What is live on this machine stays in the
root's local half (:mod:`stemma.core.store.local_half`).

Credentials come from each cloud's own chain, read by ``object_store`` itself: environment
variables (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ``GOOGLE_SERVICE_ACCOUNT``,
``AZURE_STORAGE_ACCOUNT_NAME``, ...), and the instance's or pod's identity. Anything else
(an endpoint, a region, plain HTTP for a server on 127.0.0.1) is given as a JSON object in
``$STEMMA_STORAGE_OPTIONS``, whose keys are ``object_store``'s (and delta-rs's) own.

Concurrent commits are safe without a lock service: on S3, delta-rs writes each commit file
with a conditional put (``If-None-Match``), which AWS S3 and every current S3-compatible server
honour; GCS and Azure have had conditional writes all along. stemma never turns on the unsafe
rename.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
from typing import Any

from stemma.core.errors import RootURLError
from stemma.core.store.locations import RootLayout
from stemma.core.store.root_urls import OBJECT_SCHEMES, ObjectRoot

OPTIONS_ENV = "STEMMA_STORAGE_OPTIONS"
_DEFAULTS: dict[str, dict[str, str]] = {
    # A commit file is created only if it does not exist yet: the put is conditional.
    "s3": {"conditional_put": "etag"},
    "gs": {},
    "az": {},
}
_CREDENTIAL_HINTS = {
    "s3": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a profile or instance role)",
    "gs": "GOOGLE_SERVICE_ACCOUNT (a service-account file) or the VM's identity",
    "az": "AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY (or a managed identity)",
}


def storage_options(root: ObjectRoot) -> dict[str, str]:
    """The options every reader and writer of ``root`` is given (besides the environment).

    Raises:
        RootURLError: ``$STEMMA_STORAGE_OPTIONS`` is not a JSON object of strings.
    """
    options = dict(_DEFAULTS[root.scheme])
    options.update(_options_from_env(root))
    return options


def table_uri(root: ObjectRoot, name: str) -> str:
    """The URL of the Delta table ``name`` (``artifacts/metric``, ...) under ``root``."""
    return f"{root.url}/delta/{name}"


def object_store(root: ObjectRoot) -> Any:
    """An ``obstore`` store whose paths are relative to ``root`` (made once per process)."""
    return _store(root.url, json.dumps(storage_options(root), sort_keys=True))


CLIENT_KEYS = frozenset(
    {
        "allow_http",
        "allow_invalid_certificates",
        "connect_timeout",
        "default_content_type",
        "http1_only",
        "http2_keep_alive_interval",
        "http2_keep_alive_timeout",
        "http2_keep_alive_while_idle",
        "http2_only",
        "pool_idle_timeout",
        "pool_max_idle_per_host",
        "proxy_url",
        "proxy_ca_certificate",
        "proxy_excludes",
        "timeout",
        "user_agent",
    }
)
"""``object_store``'s HTTP client settings: one list of options for delta-rs, but obstore takes
these apart from the store's own (given with the others, obstore's S3 store panics)."""


@functools.cache
def _store(url: str, options: str) -> Any:
    from obstore.exceptions import UnknownConfigurationKeyError
    from obstore.store import from_url  # only roots in an object store need it

    given: dict[str, str] = json.loads(options)
    client = {k: v for k, v in given.items() if k.lower() in CLIENT_KEYS}
    config = {k: v for k, v in given.items() if k.lower() not in CLIENT_KEYS}
    while True:
        try:
            return from_url(url, client_options=client or None, **config)  # pyright: ignore[reportCallIssue, reportUnknownVariableType, reportArgumentType]
        except UnknownConfigurationKeyError as err:
            # An option only delta-rs reads (a locking provider's, say): obstore lists the
            # bucket without it.
            unknown = next((k for k in config if repr(k) in str(err)), None)
            if unknown is None:
                raise
            del config[unknown]


def delete_objects(root: ObjectRoot, urls: list[str]) -> None:
    """Delete the objects of ``root``'s bucket these URLs name (one absent is no error)."""
    import obstore

    keys = [url.removeprefix(f"{root.url}/") for url in urls]
    store = object_store(root)
    try:
        try:
            if keys:
                obstore.delete(store, keys)
        except FileNotFoundError:  # (a store that says so for a batch: one by one, then)
            for key in keys:
                with contextlib.suppress(FileNotFoundError):
                    obstore.delete(store, key)
    except Exception as err:
        raise unreachable(root, err) from err


def check_reachable(layout: RootLayout) -> None:
    """One listing request under the root: the bucket exists and these credentials can read it.

    Made before a run sends any work, so a typo'd bucket or a missing credential is said once,
    in one line, instead of by the first commit after the work is done. A listing by folder
    (``delta/``, ``_stemma/``, ...): its answer is a few names whatever the root holds, where a
    plain listing's first page names up to 1,000 objects (0.09 s on the local S3 server at 650).

    Raises:
        RootURLError: the listing failed; the message names the root, what the store said
            (its first line) and what to check.
    """
    root = layout.store
    if root is None:
        return
    import obstore

    try:
        obstore.list_with_delimiter(object_store(root))
    except Exception as err:  # obstore's errors are per store kind; each is worth one line
        raise unreachable(root, err) from err


def unreachable(root: ObjectRoot, err: BaseException) -> RootURLError:
    """The one-line error for ``root`` when a request to its store failed with ``err``."""
    said = _first_line(err)
    lowered = said.lower()
    # A status as a number of its own: "404" inside a duration ("in 1.898404608s") is not one.
    status = {int(code) for code in re.findall(r"(?<![\d.])(4\d\d)(?![\d.])", said)}
    if 404 in status or "nosuchbucket" in lowered or "not found" in lowered:
        fix = f"check the bucket's name ({root.bucket!r}): it does not exist or is not visible"
    elif status & {401, 403} or "denied" in lowered or "credential" in lowered:
        fix = f"check the credentials: {_CREDENTIAL_HINTS[root.scheme]}"
    else:
        fix = (
            "check the endpoint and network (options go in "
            f"${OPTIONS_ENV}, credentials in {_CREDENTIAL_HINTS[root.scheme]})"
        )
    store = OBJECT_SCHEMES[root.scheme]
    return RootURLError(f"root {root.url!r} cannot be reached in {store}: {fix} ({said})")


_TRANSPORT_SIGNS = (
    "error sending request",
    "connection refused",
    "connection reset",
    "connection closed",
    "broken pipe",
    "timed out",
    "dns error",
    "tcp connect error",
)
"""What delta-rs's and object_store's errors say when a request never got its answer (the
server down or unreachable), as opposed to an answer the store gave."""


def transport_failed(err: BaseException) -> bool:
    """Whether ``err`` says the store did not answer (after object_store's own retries)."""
    said = str(err).lower()
    return any(sign in said for sign in _TRANSPORT_SIGNS)


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    line = text[0] if text else type(err).__name__
    return line if len(line) <= 240 else line[:237] + "..."


def _options_from_env(root: ObjectRoot) -> dict[str, str]:
    raw = os.environ.get(OPTIONS_ENV)
    if not raw:
        return {}
    try:
        found = json.loads(raw)
    except json.JSONDecodeError as err:
        raise RootURLError(
            f"root {root.url!r}: ${OPTIONS_ENV} is not JSON ({err.msg} at character "
            f'{err.pos}); give an object of strings, e.g. {{"endpoint": "http://host:9000"}}'
        ) from err
    if not isinstance(found, dict) or not all(
        isinstance(k, str) and isinstance(v, str)
        for k, v in found.items()  # pyright: ignore[reportUnknownVariableType]
    ):
        raise RootURLError(
            f"root {root.url!r}: ${OPTIONS_ENV} must be a JSON object of strings, e.g. "
            '{"endpoint": "http://host:9000", "allow_http": "true"}'
        )
    return dict(found)  # pyright: ignore[reportUnknownArgumentType]
