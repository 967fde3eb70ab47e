"""One crash case: run the pipeline killed at a write point, run it again, say what is wrong.

Shared by the local test (every point) and the SLURM one (a sample). A case is a point
addressed as ``NAME:K`` (the Kth time ``NAME`` is reached in the run, see
``stemma.core.crash_points``), so it means the same point whatever a timer did meanwhile.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from stemma.core.crash_points import AT_ENV, LOG_ENV, SCOPE_ENV
from tests.faults.crash_tables import delta_tables, differences, duplicates, row_set
from tests.faults.sqlite_tables import sqlite_tables

SCRIPT = pathlib.Path(__file__).parent / "crash_pipeline.py"
STORE_ENV = "STEMMA_STORE"
SENTINELS = {"delta": "executions.parquet", "sqlite": "sentinel.json"}
"""The file whose presence makes a staged bundle complete, per store."""
RUN_TIMEOUT = 240.0
"""Seconds one run of the pipeline may take on a loaded machine (it takes a few)."""
TIMER_DRIVEN = frozenset({"live.state"})
"""Points also reached on a timer (the live state's heartbeat, once a second): only their first
time, at the run's start, is a case; the others fall at moments the points around them cover,
and how many there are depends on how fast the machine is."""


@dataclass(frozen=True)
class Point:
    """A write point as a run reaches it: its name, which time, its number in the run."""

    name: str
    nth: int
    seq: int
    pid: int
    """The process that reached it."""

    @property
    def address(self) -> str:
        """``NAME:K``, as ``$STEMMA_CRASH_AT`` takes it."""
        return f"{self.name}:{self.nth}"


@dataclass(frozen=True)
class CleanRun:
    """What a run nobody killed made: the baseline every case must end up equal to."""

    points: tuple[Point, ...]
    outputs: dict[str, list[str]]
    tables: dict[str, pl.DataFrame]
    out_files: dict[str, bytes]


def run_pipeline(
    root: pathlib.Path | str,
    backend: str,
    *,
    log: pathlib.Path | None = None,
    at: str | None = None,
    store: str = "delta",
    scope: str | None = None,
    state: pathlib.Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``crash_pipeline.py`` in its own session (a crash kills its process group only).

    ``scope``: ``$STEMMA_CRASH_SCOPE`` (``process`` kills only the process reaching the point).
    ``root`` may be a bucket's URL, its local half then under ``state`` (``$STEMMA_STATE_DIR``).
    """
    env = {k: v for k, v in os.environ.items() if k not in (AT_ENV, LOG_ENV, SCOPE_ENV)}
    env[STORE_ENV] = store
    if state is not None:
        env["STEMMA_STATE_DIR"] = str(state)
    if log is not None:
        env[LOG_ENV] = str(log)
    if at is not None:
        env[AT_ENV] = at
    if scope is not None:
        env[SCOPE_ENV] = scope
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root), backend],
        cwd=state if state is not None else pathlib.Path(root).parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
        start_new_session=True,
    )


def tables_of(root: pathlib.Path, store: str) -> dict[str, pl.DataFrame]:
    """The root's records as Delta tables, whichever store kept them."""
    return sqlite_tables(root) if store == "sqlite" else delta_tables(root)


def points_of(log: pathlib.Path) -> tuple[Point, ...]:
    """The points a run reached, in order, from its ``seq pid name`` log."""
    seen: Counter[str] = Counter()
    found: list[Point] = []
    for line in log.read_text().splitlines():
        seq, pid, name = line.split(" ", 2)
        seen[name] += 1
        found.append(Point(name, seen[name], int(seq), int(pid)))
    return tuple(found)


def cases(points: Sequence[Point]) -> list[Point]:
    """The points to crash at: every one, but a timer-driven point only the first time."""
    return [point for point in points if point.name not in TIMER_DRIVEN or point.nth == 1]


def out_files(root: pathlib.Path) -> dict[str, bytes]:
    """The published ``OUT`` files under ``outputs/`` (scratch and retired ones are hidden)."""
    base = root / "outputs"
    return {
        path.relative_to(base).as_posix(): path.read_bytes()
        for path in sorted(base.rglob("*"))
        if path.is_file() and not any(p.startswith(".") for p in path.relative_to(base).parts)
    }


def clean_run(base: pathlib.Path, backend: str, store: str = "delta") -> CleanRun:
    """Run the pipeline once, unkilled, listing its points.

    Raises:
        AssertionError: the run failed.
    """
    base.mkdir(parents=True, exist_ok=True)
    root, log = base / "root", base / "points.log"
    done = run_pipeline(root, backend, log=log, store=store)
    assert done.returncode == 0, done.stderr[-3000:]
    return CleanRun(
        points=points_of(log),
        outputs=json.loads(done.stdout),
        tables=tables_of(root, store),
        out_files=out_files(root),
    )


def crash_case(
    base: pathlib.Path,
    backend: str,
    point: Point,
    clean: CleanRun,
    *,
    kills_the_run: bool = True,
    start_from: pathlib.Path | None = None,
    store: str = "delta",
    scope: str | None = None,
) -> list[str]:
    """Kill a run at ``point``, run it again; every way the result falls short of ``clean``.

    ``kills_the_run``: the point is reached by the orchestrator or a process of its group (every
    point on the local backend). A point reached inside a SLURM element kills that element
    only, and the run, which outlives it, may finish by itself. ``start_from``: a root to
    start from (a copy of it), as a crash left it; the run killed there is then a restart.
    ``store``: ``delta`` or ``sqlite``, the store the runs keep their records in. ``scope``:
    ``process`` kills only the process reaching the point (a worker), not the run.
    """
    base.mkdir(parents=True, exist_ok=True)
    root, log = base / "root", base / "points.log"
    if start_from is not None:
        shutil.copytree(start_from, root, symlinks=True)
    killed = run_pipeline(root, backend, log=log, at=point.address, store=store, scope=scope)
    problems: list[str] = []
    if kills_the_run and killed.returncode != -signal.SIGKILL:
        problems.append(
            f"the run was not killed there (exit {killed.returncode}): {killed.stderr[-1500:]}"
        )
    committed = tables_of(root, store)
    problems.extend(f"after the crash: {p}" for p in duplicates(committed))

    rerun = run_pipeline(root, backend, store=store)
    if rerun.returncode != 0:
        return [*problems, f"the rerun failed (exit {rerun.returncode}): {rerun.stderr[-3000:]}"]
    if json.loads(rerun.stdout) != clean.outputs:
        problems.append(f"the rerun offers other artifacts: {rerun.stdout.strip()}")
    after = tables_of(root, store)
    problems.extend(differences(after, clean.tables))
    for name, frame in committed.items():
        if not row_set(frame) <= row_set(after.get(name, frame.clear())):
            problems.append(f"{name} lost rows committed before the crash")
    problems.extend(staging_left(root, SENTINELS[store]))
    if out_files(root) != clean.out_files:
        problems.append("the published OUT files differ from a clean run's")
    return problems


def crashed_root(base: pathlib.Path, backend: str, address: str) -> pathlib.Path:
    """A root as a run killed at ``address`` left it.

    Raises:
        AssertionError: the run was not killed there.
    """
    base.mkdir(parents=True, exist_ok=True)
    root = base / "root"
    killed = run_pipeline(root, backend, log=base / "points.log", at=address)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    return root


def recovery_points(base: pathlib.Path, backend: str, crashed: pathlib.Path) -> tuple[Point, ...]:
    """The points a restart on (a copy of) ``crashed`` reaches before its run starts: recovery's.

    A run writes its live state first thing once it starts; every point before that is the
    store finishing what the crash left (``recover()``).
    """
    base.mkdir(parents=True, exist_ok=True)
    root, log = base / "root", base / "points.log"
    shutil.copytree(crashed, root, symlinks=True)
    done = run_pipeline(root, backend, log=log)
    assert done.returncode == 0, done.stderr[-3000:]
    points = points_of(log)
    first = next(i for i, point in enumerate(points) if point.name == "live.state")
    return points[:first]


def staging_left(root: pathlib.Path, sentinel: str) -> list[str]:
    """Complete bundles, waves or quarantined bundles still in staging after the rerun.

    A bundle without its sentinel, its writer killed, is left for an hour by design (its writer
    could be alive on another host): it is not work lost, and is not reported.
    """
    staging = root / "staging"
    complete = [
        path.parent
        for path in staging.glob(f"*/*/*/*/{sentinel}")
        if path.parts[-5] not in (".retired", ".waves", ".quarantine")
    ]
    found = [f"a complete bundle left in staging: {p.relative_to(root)}" for p in complete]
    found.extend(f"a wave left in staging: {w.name}" for w in staging.glob(".waves/*"))
    if any((staging / ".quarantine").glob("*/*")):
        found.append("a bundle was quarantined")
    return found
