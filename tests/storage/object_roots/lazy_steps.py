"""Module-level step functions for the object-root tests: workers import them by name."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

from tests.core.lazy_functions import count


def square(x: int) -> int:
    count("square")
    return x * x


def add(a: object, b: object) -> str:
    count("add")
    return f"{a}+{b}"


def slow_square(x: int) -> int:
    """``x * x`` after ``$STEMMA_TEST_SLEEP`` seconds (a runner a test kills holds its lease)."""
    count("slow_square")
    time.sleep(float(os.environ.get("STEMMA_TEST_SLEEP", "0")))
    return x * x


def where(ctx_prefix: str, ctx_region: str | None) -> dict[str, str | None]:
    """What a step's context said its prefix and region were."""
    return {"prefix": ctx_prefix, "region": ctx_region}


def _put(where: str, name: str, data: bytes) -> None:
    """Write ``data`` at ``where/name`` (or at ``where`` itself, for ``name == ""``) with the
    user's own tool: obstore from the URL alone on a bucket, ``pathlib`` on a local path."""
    if "://" not in where:
        target = Path(where, name) if name else Path(where)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return
    import obstore
    from obstore.store import from_url

    base, _, last = where.rpartition("/")
    store = from_url(where) if name else from_url(base)  # the credentials from the environment
    obstore.put(store, name or last, data)


def write_parts(out_url: str, parts: int) -> str:
    """Write ``parts`` objects and one in a folder under ``out_url``; return the URL told."""
    count("write_parts")
    for i in range(parts):
        _put(out_url, f"part-{i}.txt", f"part {i}".encode())
    _put(out_url, "nested été/summary.json", json.dumps({"parts": parts}).encode())
    return out_url


def write_one_object(out_url: str, text: str) -> None:
    """Write the output as one object at ``out_url`` itself."""
    count("write_one_object")
    _put(out_url, "", text.encode())


def write_then_fail(out_url: str) -> None:
    """Write one part under ``out_url``, then fail: an attempt that dies half-way."""
    count("write_then_fail")
    _put(out_url, "part-0.txt", b"half")
    raise RuntimeError("failed after writing one part")


def write_both(out_path: str, out_url: str) -> None:
    """Write ``a.txt`` under ``OUT`` and under ``OUT_URL`` both."""
    count("write_both")
    _put(out_path, "a.txt", b"local")
    _put(out_url, "a.txt", b"bucket")


def write_beside_a_folder_marker(out_url: str) -> None:
    """Write ``dir/f.txt`` under ``out_url`` on S3, and the empty ``dir/`` object a console's
    "Create folder" (or Hadoop's S3A) leaves, with a plain HTTP PUT to the local server."""
    count("write_beside_a_folder_marker")
    _put(out_url, "dir/f.txt", b"in a folder")
    where = out_url.removeprefix("s3://")
    marker = f"{os.environ['AWS_ENDPOINT_URL']}/{where}/dir/"
    urllib.request.urlopen(urllib.request.Request(marker, data=b"", method="PUT"), timeout=10)
