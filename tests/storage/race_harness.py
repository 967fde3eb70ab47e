"""The harness of the concurrency table: writers started at a barrier, and what every race keeps.

test_concurrency_table.py starts each writer (``concurrency_writer.py``) as its own process on
one root, lets them all go at once with :meth:`Root.race`, and then checks, besides its row's
own outcome, :func:`assert_sound`: each table reads whole, every data file it references is on
disk, no row is there twice, nothing is left staged.
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

from stemma.storage import DeltaStore
from stemma.storage.maintenance import delta_tables

from .conftest import FunctionStep, read_delta

CHECKOUT = Path(__file__).resolve().parents[2]
DEADLINE_SECONDS = 120.0
"""How long the test waits for its writers to get ready, and then for each to finish."""


@dataclass(frozen=True)
class Root:
    """The root a row races on, and the barrier directory its writers meet at."""

    path: Path
    barrier: Path

    def start(self, role: str, index: int, *args: object) -> subprocess.Popen[str]:
        """Start a writer; it stops at the barrier until :meth:`race` says go."""
        argv = ["-m", "tests.storage.concurrency_writer", role, str(self.path), str(self.barrier)]
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


# ---------------------------------------------------------------- what holds after every race


def tables(root: Path) -> dict[str, pl.DataFrame]:
    """Every Delta table of the root by name, each read whole (so: readable)."""
    return {name: read_delta(path) for name, path in delta_tables(DeltaStore(root).layout)}


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


def assert_sound(root: Path, expected: str) -> dict[str, pl.DataFrame]:
    """Every table reads, every data file it references is there, no row is there twice."""
    found = tables(root)
    assert {name: duplicates(name, frame) for name, frame in found.items()} == dict.fromkeys(
        found, 0
    ), expected
    for name, path in delta_tables(DeltaStore(root).layout):
        missing = [u for u in DeltaTable(str(path)).file_uris() if not _exists(u)]
        assert not missing, f"{expected}: {name} references removed files {missing}"
    left = [p for p in (root / "staging").glob("*/*/*/*") if p.parts[-4] != ".retired"]
    assert not left, f"{expected}: still staged {left}"
    assert not list((root / "staging").glob(".waves/*")), expected
    return found


def _exists(uri: str) -> bool:
    return Path(unquote(uri.removeprefix("file://"))).exists()


def rows(frame: pl.DataFrame) -> set[str]:
    """Each row of a table as a canonical JSON line (nulls compare equal, unlike in a join)."""
    return {json.dumps(row, sort_keys=True, default=str) for row in frame.iter_rows(named=True)}


def ids(frame: pl.DataFrame, column: str) -> list[str]:
    """A column's values, sorted."""
    return sorted(frame.get_column(column).to_list())
