"""Upkeep of the contents kept as files (:mod:`stemma.storage.content_files`): check and vacuum.

``stemma check`` names a row whose content file is missing, or holds another number of bytes
than the row records: the content cannot be read, and nothing else has it. ``stemma vacuum``
removes a file no artifact refers to any more, older than the retention: one a worker kept for
a unit that was never committed (killed, or its run cancelled before the commit). A file is
referred to when its id is in the artifact index, or in the index rows of a bundle still staged
(work not committed yet, which recovery commits later), so no vacuum takes a file a commit is
still to name.

The files are listed once (a directory walk on a filesystem, one listing of ``contents/`` in a
bucket); the tables are read for two small columns (``artifact_id``, ``size``) and, only for
rows whose file is missing, whether their content is null (a row an older stemma wrote keeps
even a large content in its table).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from stemma.core.store.locations import RootLayout
from stemma.storage import object_roots
from stemma.storage.check_findings import Problem, Severity
from stemma.storage.content_files import FOLDER, LARGE_CONTENT_BYTES, key
from stemma.storage.leftovers import Removal
from stemma.storage.schemas import (
    ARTIFACT_INDEX,
    BY_NAME,
    CONFIGS,
    DATA,
    TableSpec,
    user_content_table,
)
from stemma.storage.tables import read_table


@dataclass(frozen=True)
class KeptFile:
    """One file under ``contents/``."""

    artifact_id: str
    where: Path | str
    """Its path, or its URL in the root's bucket."""
    size: int
    modified: float
    """When it was last written (seconds since the epoch)."""


def kept_files(layout: RootLayout) -> dict[str, KeptFile]:
    """Every file under the root's ``contents/``, by artifact id (partial ones left out)."""
    root = layout.store
    found: dict[str, KeptFile] = {}
    if root is None:
        top = layout.root / FOLDER
        for base, _, names in os.walk(top):
            for name in names:
                path = Path(base) / name
                try:
                    stat = path.stat()
                except OSError:
                    continue  # removed meanwhile
                if not name.startswith("."):  # (a temporary being written)
                    found[name] = KeptFile(name, path, stat.st_size, stat.st_mtime)
        return found
    import obstore

    try:
        for batch in obstore.list(object_roots.object_store(root), f"{FOLDER}/"):
            for meta in batch:
                name = str(meta["path"]).rsplit("/", 1)[-1]
                modified = meta["last_modified"].timestamp()
                url = f"{root.url}/{meta['path']}"
                found[name] = KeptFile(name, url, int(meta["size"]), modified)
    except Exception as err:
        raise object_roots.unreachable(root, err) from err
    return found


def content_tables(names: list[str]) -> list[TableSpec]:
    """The tables among ``names`` (the root's) whose content may be kept in a file."""
    return [DATA, CONFIGS] + [user_content_table(name, ()) for name in names if name not in BY_NAME]


def content_problems(layout: RootLayout, names: list[str]) -> list[Problem]:
    """A problem for each row whose content file is missing or holds another size."""
    files = kept_files(layout)
    problems: list[Problem] = []
    for spec in content_tables(names):
        large = read_table(
            layout, spec, pl.col("size") >= LARGE_CONTENT_BYTES, ["artifact_id", "size"]
        )
        sizes = dict(large.iter_rows())
        missing = [i for i in sizes if i not in files]
        if missing:  # only a row with no content in its table has its content in a file
            empty = pl.col("artifact_id").is_in(missing) & pl.col("content").is_null()
            missing = read_table(layout, spec, empty, ["artifact_id"])["artifact_id"].to_list()
        for artifact_id in sorted(missing):
            problems.append(_damaged(layout, spec, artifact_id, "is missing"))
        for artifact_id, size in sorted(sizes.items()):
            kept = files.get(artifact_id)
            if kept is not None and kept.size != size:
                said = f"holds {kept.size} bytes where its row records {size}"
                problems.append(_damaged(layout, spec, artifact_id, said))
    return problems


def _damaged(layout: RootLayout, spec: TableSpec, artifact_id: str, said: str) -> Problem:
    where = layout.root / key(artifact_id)
    if layout.store is not None:
        where = f"{layout.store.url}/{key(artifact_id)}"
    return Problem(
        severity=Severity.DAMAGED,
        path=where,
        what=f"the content of artifact {artifact_id} ({spec.name}) {said}: it cannot be read",
        fix="restore the file from a copy of the root; otherwise make the artifact again by "
        "rerunning the step that made it under a new version",
    )


def unreferenced(layout: RootLayout, cutoff: dt.datetime) -> list[Removal]:
    """The files no artifact (committed or staged) refers to, last written before ``cutoff``."""
    files = kept_files(layout)
    if not files:
        return []
    referred = set(read_table(layout, ARTIFACT_INDEX, columns=["artifact_id"])["artifact_id"])
    referred |= _staged_ids(layout)
    limit = cutoff.timestamp()
    return [
        Removal(kind="contents", path=kept.where, size=kept.size)
        for artifact_id, kept in sorted(files.items())
        if artifact_id not in referred and kept.modified < limit
    ]


def remove_unreferenced(layout: RootLayout, removals: list[Removal]) -> None:
    """Delete the files ``removals`` names (a missing one is fine)."""
    root = layout.store
    if root is None:
        for removal in removals:
            Path(removal.path).unlink(missing_ok=True)
        return
    object_roots.delete_objects(root, [str(removal.path) for removal in removals])


def _staged_ids(layout: RootLayout) -> set[str]:
    """The artifact ids of every bundle under staging (claimed by a wave or not)."""
    found: set[str] = set()
    for path in sorted(layout.staging.rglob(ARTIFACT_INDEX.staged_name)):
        try:
            found.update(pl.read_parquet(path, columns=["artifact_id"])["artifact_id"])
        except (OSError, pl.exceptions.PolarsError):
            continue  # a bundle cut short: recovery discards it and its unit runs again
    return found
