"""A staged bundle's files in the SQLite store: its rows in ``records.json``, ``sentinel.json``.

Staging writes files only (a worker on another node never opens the database): the rows of a
pack of units as one JSON document (:mod:`~stemma.core.store.sqlite.execution_rows`), written
under a temporary name, fsynced and renamed into place, then the sentinel the same way
(:mod:`~stemma.core.store.staging.writing` keeps the order). The sentinel records the records
file's size and xxh3_128 digest, so a bundle holding its sentinel is complete, one without it
was left by a writer that has not finished (or died), and a records file truncated or garbled
afterwards is told apart from a good one before any of it is committed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from stemma.core.identity import content_id
from stemma.core.store.sqlite.execution_rows import ARTIFACTS, STAGED_TABLES, decode_content
from stemma.core.store.sqlite.schema import (
    ARTIFACT_COLUMNS,
    ARTIFACT_EDGE_COLUMNS,
    EXECUTION_COLUMNS,
    EXECUTION_ROLE_COLUMNS,
)
from stemma.core.store.staging.problems import StagingProblem, corrupt
from stemma.core.store.staging.visibility import BundleShape, check_staged

if TYPE_CHECKING:
    from stemma.core.store.staging.bundle_format import BundleFiles

RECORDS = "records.json"
"""The bundle's rows, per table."""
SENTINEL = "sentinel.json"
"""Written last: its presence marks the bundle complete."""
BUNDLE_FORMAT = "stemma-sqlite-bundle/1"
"""Names the layout of both files, so a future layout is refused, never misread."""
_WIDTHS = {
    "executions": len(EXECUTION_COLUMNS),
    "artifacts": len(ARTIFACT_COLUMNS),
    "artifact_edges": len(ARTIFACT_EDGE_COLUMNS),
    "execution_roles": len(EXECUTION_ROLE_COLUMNS),
}


@dataclass(frozen=True)
class Sentinel:
    """What a complete bundle's sentinel says about its records file."""

    size: int
    """The records file's size in bytes."""
    digest: str
    """The records file's xxh3_128."""


def encode_rows(rows: Mapping[str, list[list[Any]]]) -> BundleFiles:
    """``rows`` as this store's two bundle files, written by the staging protocol's writer."""
    data = json.dumps({"format": BUNDLE_FORMAT, "tables": rows}, separators=(",", ":")).encode()
    sentinel = {
        "format": BUNDLE_FORMAT,
        "records": {"name": RECORDS, "size": len(data), "xxh3_128": content_id(data)},
        "rows": {table: len(found) for table, found in rows.items()},
    }
    return _JsonFiles(records=data, sentinel=json.dumps(sentinel).encode())


@dataclass(frozen=True)
class _JsonFiles:
    """A bundle's two files: its records and the sentinel describing them."""

    records: bytes
    sentinel: bytes

    def write_tables(self, bundle: Path) -> None:
        _write_durably(bundle, RECORDS, self.records)

    def write_sentinel(self, bundle: Path) -> None:
        _write_durably(bundle, SENTINEL, self.sentinel)


def check_bundle(bundle: Path, *, shared: bool = False) -> Sentinel | StagingProblem:
    """Look once whether a bundle is whole: its directory, its sentinel, its records file.

    Args:
        bundle: the bundle directory.
        shared: the root is on a shared filesystem: open and read each file instead of
            listing the directory (:mod:`stemma.core.store.staging.visibility`).
    """
    return check_staged(bundle, SHAPE, shared=shared)


def read_sentinel(bundle: Path) -> Sentinel:
    """The sentinel of a complete bundle.

    Raises:
        FileNotFoundError: the sentinel is not there.
        ValueError: it is not a sentinel of this format.
    """
    decoded: object = json.loads((bundle / SENTINEL).read_bytes())
    fields = cast(dict[str, Any], decoded) if isinstance(decoded, dict) else {}
    records: object = fields.get("records")
    listed = cast(dict[str, Any], records) if isinstance(records, dict) else {}
    size, digest = listed.get("size"), listed.get("xxh3_128")
    if (
        fields.get("format") != BUNDLE_FORMAT
        or not isinstance(size, int)
        or not isinstance(digest, str)
    ):
        raise ValueError(f"not a sentinel of {BUNDLE_FORMAT}")
    return Sentinel(size=size, digest=digest)


def read_rows(bundle: Path, sentinel: Sentinel) -> dict[str, list[list[Any]]] | StagingProblem:
    """The rows of a complete bundle, artifact content decoded, checked against its sentinel.

    A records file that does not match its sentinel is read once more with a fresh sentinel
    (a writer restaging the bundle replaces both), then reported corrupt.

    Raises:
        FileNotFoundError: the bundle is gone (committed and retired by another process).
    """
    data = (bundle / RECORDS).read_bytes()
    if len(data) != sentinel.size or content_id(data) != sentinel.digest:
        try:
            sentinel = read_sentinel(bundle)
        except ValueError as err:
            return corrupt(bundle, (SENTINEL,), f"cannot read {bundle / SENTINEL}: {err}")
        data = (bundle / RECORDS).read_bytes()
        if len(data) != sentinel.size or content_id(data) != sentinel.digest:
            return corrupt(
                bundle,
                (RECORDS,),
                f"{bundle / RECORDS} holds {len(data)} bytes that do not match its {SENTINEL} "
                f"({sentinel.size} bytes, xxh3_128 {sentinel.digest}): truncated or damaged",
            )
    try:
        return _decode(data)
    except (ValueError, TypeError, KeyError) as err:
        return corrupt(bundle, (RECORDS,), f"cannot read the staged rows in {bundle}: {err}")


def _checked_sentinel(bundle: Path) -> Sentinel:
    try:
        return read_sentinel(bundle)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read {bundle / SENTINEL}: {err}") from err


SHAPE = BundleShape(
    sentinel=SENTINEL,
    read_sentinel=_checked_sentinel,
    listed=lambda sentinel: {RECORDS: sentinel.size},
)
"""A bundle of this store: its sentinel records the records file's size."""


def _decode(data: bytes) -> dict[str, list[list[Any]]]:
    decoded: object = json.loads(data)
    fields = cast(dict[str, Any], decoded) if isinstance(decoded, dict) else {}
    if fields.get("format") != BUNDLE_FORMAT:
        raise ValueError(f"not a bundle of {BUNDLE_FORMAT}")
    tables = cast(dict[str, object], fields["tables"])
    rows: dict[str, list[list[Any]]] = {}
    for table in STAGED_TABLES:
        found = tables[table]
        width = _WIDTHS[table]
        # (a row of the wrong width fails here; a damaged file never gets this far: its
        # digest does not match its sentinel's)
        if not isinstance(found, list) or set(map(len, cast(list[list[Any]], found))) - {width}:
            raise ValueError(f"the {table} rows are not rows of {width} columns")
        rows[table] = cast(list[list[Any]], found)
    for row in rows[ARTIFACTS]:
        decode_content(row)
    return rows


def _write_durably(bundle: Path, name: str, data: bytes) -> None:
    temporary = bundle / f".{name}.{os.getpid()}.tmp"
    with temporary.open("wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, bundle / name)
