"""The sentinel: what a staged bundle's ``executions.parquet`` says about the bundle.

The sentinel is written last (:mod:`stemma.storage.staging`), so its presence marks a bundle
complete, and its Parquet key-value metadata describes the bundle: the tables staged beside it,
the fields of any user-type content table (so a committer rebuilds its schema without the type
being registered in its process), and how many rows each table's file holds. A wave commit reads
this one footer per bundle while it claims the bundle, and takes everything it needs to plan the
commit from it: which files to read, and whether a table must be committed in chunks
(:mod:`stemma.storage.wave_chunks`), without opening any other file.

Bundles staged before the row counts were recorded have no :data:`ROWS_KEY`: their rows are
counted from the files' footers instead, as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import polars as pl

from stemma.core.store.staging.problems import StagedBundleError
from stemma.core.store.staging.visibility import BundleShape
from stemma.storage.schemas import BY_NAME, EXECUTIONS, TableSpec, commit_order, user_content_table

SENTINEL = EXECUTIONS.staged_name
"""The file whose presence marks a bundle complete: ``executions.parquet``."""
TABLES_KEY = "stemma.staged_tables"
"""The sentinel's Parquet metadata key listing the bundle's tables, as a JSON array of names."""
USER_TABLES_KEY = "stemma.user_tables"
"""The sentinel's metadata key giving each user content table's ``[[field, type], …]``."""
ROWS_KEY = "stemma.staged_rows"
"""The sentinel's metadata key giving each staged table's row count, as a JSON object."""


@dataclass(frozen=True)
class Listing:
    """What a complete bundle's sentinel lists."""

    tables: tuple[TableSpec, ...]
    """The bundle's tables, in commit order."""
    rows: Mapping[TableSpec, int] | None = None
    """Each table's staged rows; ``None`` for a bundle staged before they were recorded (or
    whose record is unusable), whose files' footers must be read to count them."""


def sentinel_metadata(frames: Mapping[TableSpec, pl.DataFrame]) -> dict[str, str]:
    """The sentinel's key-value metadata for a bundle holding ``frames``."""
    ordered = commit_order(frames)
    metadata = {
        TABLES_KEY: json.dumps([spec.name for spec in ordered]),
        ROWS_KEY: json.dumps({spec.name: frames[spec].height for spec in ordered}),
    }
    user_tables = {
        spec.name: [list(pair) for pair in spec.user_fields]
        for spec in ordered
        if spec.user_fields is not None
    }
    if user_tables:
        metadata[USER_TABLES_KEY] = json.dumps(user_tables)
    return metadata


def read_listing(bundle: Path) -> Listing:
    """What the sentinel of a complete bundle lists: its tables and, if recorded, their rows.

    Reads the sentinel's footer only.

    Raises:
        StagedBundleError: the sentinel is unreadable or does not list valid tables.
    """
    sentinel = bundle / SENTINEL
    try:
        metadata = pl.read_parquet_metadata(sentinel)
    except (OSError, pl.exceptions.PolarsError) as err:
        raise StagedBundleError(f"cannot read the metadata of {sentinel}: {err}") from err
    listed = metadata.get(TABLES_KEY)
    try:
        decoded: object = json.loads(listed) if listed is not None else None
        users = cast("dict[str, list[list[str]]]", json.loads(metadata.get(USER_TABLES_KEY, "{}")))
        known = dict(BY_NAME)
        for name, fields in users.items():
            known[name] = user_content_table(name, tuple((f, kind) for f, kind in fields))
    except (ValueError, TypeError):
        decoded = None
        known = dict(BY_NAME)
    names = set(cast("list[object]", decoded)) if isinstance(decoded, list) else set[object]()
    if EXECUTIONS.name not in names or not names <= known.keys():
        raise StagedBundleError(
            f"{sentinel} does not list the bundle's tables under {TABLES_KEY!r} (found "
            f"{listed!r}); remove the bundle directory if the execution should be rerun"
        )
    tables = tuple(commit_order(known[str(name)] for name in names))
    return Listing(tables, _rows(tables, metadata.get(ROWS_KEY)))


def _rows(tables: Sequence[TableSpec], recorded: str | None) -> dict[TableSpec, int] | None:
    """The recorded row counts, if they name every table with a count; else ``None``.

    An unusable record is not an error: the counts are then read from the footers, which is
    what a commit did before they were recorded.
    """
    try:
        decoded: object = json.loads(recorded) if recorded is not None else None
    except ValueError:
        return None
    if not isinstance(decoded, dict):
        return None
    counts = cast("dict[object, object]", decoded)
    rows: dict[TableSpec, int] = {}
    for spec in tables:
        count = counts.get(spec.name)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            return None
        rows[spec] = count
    return rows


SHAPE = BundleShape(
    sentinel=SENTINEL,
    read_sentinel=read_listing,
    listed=lambda listing: {spec.staged_name: None for spec in listing.tables},
)
"""A Delta bundle to a check: its sentinel lists the tables staged beside it (and their rows,
not their sizes)."""
