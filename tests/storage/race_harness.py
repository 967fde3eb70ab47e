"""The harness of the concurrency table: writers started at a barrier, and what every race keeps.

test_concurrency_table.py starts each writer (``concurrency_writer.py``) as its own process on
one root, lets them all go at once with :meth:`Root.race`, and then checks, besides its row's
own outcome, :func:`assert_sound`: each table reads whole, every data file it references is
there, no row is there twice, nothing is left staged.

A root is a directory, or a bucket's URL (``s3://…/root``): its tables are then in the bucket,
read here as the store reads them (:func:`table_places`, delta-rs with the root's storage
options), and what is staged is in its local half on this machine, which every writer shares
(the same ``$STEMMA_STATE_DIR``, as processes on one machine do).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import polars as pl
from deltalake import DeltaTable

from stemma.core.store.locations import RootLayout, resolve_root
from stemma.storage import DeltaStore, object_roots
from stemma.storage.bucket_maintenance import bucket_tables
from stemma.storage.maintenance import delta_tables
from stemma.storage.table_places import TablePlace, table_place

from .conftest import FunctionStep

CHECKOUT = Path(__file__).resolve().parents[2]
DEADLINE_SECONDS = 120.0
"""How long the test waits for its writers to get ready, and then for each to finish."""


@dataclass(frozen=True)
class Root:
    """The root a row races on, and the barrier directory its writers meet at."""

    given: Path | str
    """The root as a user gives it: a directory, or a bucket's URL (``s3://{bucket}/root``)."""
    barrier: Path

    @property
    def local(self) -> Path:
        """Where the root's files on this machine are: the directory, or the bucket's local half."""
        return resolve_root(self.given)

    @property
    def in_bucket(self) -> bool:
        """Whether the root's tables are in an object store."""
        return isinstance(self.given, str)

    def layout(self) -> RootLayout:
        """The root's layout, as a store on it sees it."""
        return DeltaStore(self.given).layout

    def start(self, role: str, index: int, *args: object) -> subprocess.Popen[str]:
        """Start a writer; it stops at the barrier until :meth:`race` says go."""
        argv = ["-m", "tests.storage.concurrency_writer", role, str(self.given), str(self.barrier)]
        path = os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")]))
        return subprocess.Popen(
            [sys.executable, *argv, str(index), *(str(arg) for arg in args)],
            cwd=self.barrier,
            env={**os.environ, "PYTHONPATH": path},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def race(self, writers: list[subprocess.Popen[str]]) -> list[dict[str, Any]]:
        """Once every writer is ready, let them all go; what each reported, in start order."""
        deadline = time.monotonic() + DEADLINE_SECONDS
        while len(list(self.barrier.glob("ready-*"))) < len(writers):
            crashed = [w for w in writers if w.poll() is not None]
            assert not crashed, crashed[0].communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the writers never got ready"
            time.sleep(0.01)
        (self.barrier / "go").touch()
        reports: list[dict[str, Any]] = []
        for writer in writers:
            out, err = writer.communicate(timeout=DEADLINE_SECONDS)
            assert writer.returncode == 0, err[-3000:]
            reports.append(json.loads(out.strip().splitlines()[-1]))
        return reports

    def committer_records(self, index: int, steps: list[FunctionStep]) -> Path:
        """Pickle the steps a committer records, as the engine hands them to the store."""
        path = self.barrier.parent / f"records-{index}.pickle"
        path.write_bytes(
            pickle.dumps([(s.execution, s.step_outputs, [s.running, s.final]) for s in steps])
        )
        return path


# ---------------------------------------------------------------- where the tables are


def table_places(layout: RootLayout) -> list[TablePlace]:
    """Every Delta table of the root: its directories under ``delta/``, or its bucket's, listed."""
    if layout.store is None:
        return [table_place(layout, name) for name, _ in delta_tables(layout)]
    return bucket_tables(layout)


def open_table(place: TablePlace) -> DeltaTable:
    """The table's newest version, opened as the store opens it."""
    return DeltaTable(place.uri, storage_options=place.options)


def table_files(place: TablePlace, under: str = "") -> dict[str, str]:
    """The files below a table's ``under`` (``_delta_log/``), by name relative to the table.

    Each with where it is: its path, or its URL in the bucket, as vacuum reports a removal.
    """
    if place.local is not None:
        below = place.local / under
        found = [p for p in below.rglob("*") if p.is_file()] if below.is_dir() else []
        return {p.relative_to(place.local).as_posix(): str(p) for p in found}
    table = f"delta/{place.name}/"
    return {
        key.removeprefix(table): f"{place.uri}/{key.removeprefix(table)}"
        for key in bucket_keys(place, table + under)
    }


def bucket_keys(place: TablePlace, prefix: str) -> list[str]:
    """The keys under ``prefix`` of the bucket root ``place`` is in, relative to that root."""
    import obstore

    assert place.root is not None, place
    store = object_roots.object_store(place.root)
    return [str(meta["path"]) for batch in obstore.list(store, prefix) for meta in batch]


def bucket_read(place: TablePlace, name: str) -> bytes:
    """The bytes of the file ``name`` (relative to the table) of a table in a bucket."""
    import obstore

    assert place.root is not None, place
    store = object_roots.object_store(place.root)
    return bytes(obstore.get(store, f"delta/{place.name}/{name}").bytes())


def bucket_create(place: TablePlace, name: str, data: bytes) -> str:
    """Put a new file ``name`` (relative to the table) in a bucket, only if it is not there.

    Returns its URL, as vacuum reports a removal.
    """
    import obstore

    assert place.root is not None, place
    store = object_roots.object_store(place.root)
    obstore.put(store, f"delta/{place.name}/{name}", data, mode="create")
    return f"{place.uri}/{name}"


def exists(layout: RootLayout, location: str) -> bool:
    """Whether a file is there: a path on this machine, or a URL in the root's bucket."""
    root = layout.store
    if root is None or not location.startswith(f"{root.url}/"):
        return Path(location).exists()
    import obstore

    key = unquote(location.removeprefix(f"{root.url}/"))
    try:
        obstore.head(object_roots.object_store(root), key)
    except FileNotFoundError:
        return False
    return True


# ---------------------------------------------------------------- what holds after every race


def tables(root: Root) -> dict[str, pl.DataFrame]:
    """Every Delta table of the root by name, each read whole (so: readable)."""
    return {place.name: read_table(place) for place in table_places(root.layout())}


def read_table(place: TablePlace) -> pl.DataFrame:
    """Every row of a table, read with deltalake itself (as ``conftest.read_delta`` reads one)."""
    return pl.DataFrame(open_table(place).to_pyarrow_table())


def duplicates(name: str, frame: pl.DataFrame) -> int:
    """How many rows of a table repeat a key that must be unique in it."""
    if name.startswith("artifacts/"):
        key = ["artifact_id"]
    elif name == "orchestration/executions":
        key = ["execution_run_id"]
    elif name == "orchestration/steps":
        key = ["step_run_id", "status"]
    else:  # edges and step outputs: a whole row repeated
        key = frame.columns
    return frame.height - frame.select(key).unique().height


def assert_sound(root: Root, expected: str) -> dict[str, pl.DataFrame]:
    """Every table reads, every data file it references is there, no row is there twice."""
    found: dict[str, pl.DataFrame] = {}
    for place in table_places(root.layout()):
        table = open_table(place)
        missing = _missing(place, table.file_uris())
        assert not missing, f"{expected}: {place.name} references removed files {missing}"
        found[place.name] = pl.DataFrame(table.to_pyarrow_table())
    assert {name: duplicates(name, frame) for name, frame in found.items()} == dict.fromkeys(
        found, 0
    ), expected
    staging = root.local / "staging"
    left = [p for p in staging.glob("*/*/*/*") if p.parts[-4] != ".retired"]
    assert not left, f"{expected}: still staged {left}"
    assert not list(staging.glob(".waves/*")), expected
    return found


def _missing(place: TablePlace, uris: list[str]) -> list[str]:
    """The files of ``uris`` (a table's data files) that are not there."""
    if place.local is not None:
        return [u for u in uris if not _exists(u)]
    there = set(table_files(place).values())  # one listing, not a request per file
    return [u for u in uris if unquote(u) not in there]


def _exists(uri: str) -> bool:
    return Path(unquote(uri.removeprefix("file://"))).exists()


def rows(frame: pl.DataFrame) -> set[str]:
    """Each row of a table as a canonical JSON line (nulls compare equal, unlike in a join)."""
    return {json.dumps(row, sort_keys=True, default=str) for row in frame.iter_rows(named=True)}


def ids(frame: pl.DataFrame, column: str) -> list[str]:
    """A column's values, sorted."""
    return sorted(frame.get_column(column).to_list())
