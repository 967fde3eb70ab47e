"""Issue 33: a commit's time after 10,000 commits, with the automatic compaction on and off.

One table of a real root, ``artifacts/index`` (keyed: an append reads the key column of every
data file, so it is the table whose commits grow fastest with small files), grows by stemma's
own commit path, one row per commit (``commit_frames``: the table lock, the application
transaction, the key check, the append), what every wave does to each table it writes.

- ``on``: after each commit the store's automatic compaction is told, exactly as
  ``DeltaStore.commit_wave`` tells it (``AutoCompaction.after_commit``, default
  ``CompactionPolicy``), and compacts in its background thread while the commits go on.
- ``off``: nothing compacts. Built for real up to ``--real-off`` commits (a commit there
  already costs several times a compacted one, and 10,000 would take most of an hour), and
  beyond that **synthesized**: the first commit's data file copied and its log entry written
  again under a new file name and transaction, as many times as commits are asked, then one
  checkpoint (a real table has one per 100 commits; the log then holds 1 % fewer files). At
  ``--real-off`` both are measured, to show the synthesized table commits as a real one does.
- ``on, vacuumed``: the ``on`` table at the largest size after ``vacuum_root`` (no retention):
  the log entries before its checkpoint gone, which the policy never removes.

Per size: the median and the slowest of the last 100 commits of the build (``build_ms``,
``build_max_ms``: the ``on`` commits include any wait for a compaction holding the lock), and
the median of ``--samples`` more commits made there (``commit_ms``; for ``on`` with the thread
idle first). For ``on``: the compactions made and their time (median, max: the longest is the
most a commit, or a script's end, waits for one), and the time of a pass that compacts one
table of 100 small files, counting included (``exit_wait_ms``, from the commit to idle).

    uv run python benchmarks/bench_auto_compaction.py [--sizes 100,1000,2000,10000]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import logging
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from deltalake import DeltaTable
from harness import Table, load, write_results

from stemma.core.store.locations import RootLayout
from stemma.storage.auto_compaction import AutoCompaction
from stemma.storage.commit import app_id, commit_frames
from stemma.storage.compaction_policy import CompactionPolicy
from stemma.storage.maintenance import vacuum_root
from stemma.storage.schemas import ARTIFACT_INDEX

SIZES = (100, 1_000, 2_000, 10_000)
_NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def _commit(layout: RootLayout, number: int) -> float:
    """Commit one index row through stemma's path; its seconds."""
    row = {
        "artifact_id": f"{number:032x}",
        "artifact_type": "metric",
        "origin_step_run_id": "bench-run",
        "origin_step_name": "bench",
        "origin_step": 1,
        "created_at": _NOW,
    }
    start = time.perf_counter()
    commit_frames(layout, {ARTIFACT_INDEX: ARTIFACT_INDEX.frame([row])}, app_id(f"b-{number}"))
    return time.perf_counter() - start


class _CompactionTimes(logging.Handler):
    """Each automatic compaction's milliseconds, from its debug log line."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.ms: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args
        if isinstance(args, tuple) and len(args) == 4:
            self.ms.append(float(args[3]))  # pyright: ignore[reportArgumentType]


def _table(root: pathlib.Path) -> pathlib.Path:
    return ARTIFACT_INDEX.path(RootLayout(root).delta)


def _shape(root: pathlib.Path) -> dict[str, int]:
    path = _table(root)
    return {
        "data_files": len(DeltaTable(path).file_uris()),
        "log_files": len(list((path / "_delta_log").iterdir())),
    }


def _samples(root: pathlib.Path, first: int, count: int, after: AutoCompaction | None) -> float:
    """The median ms of ``count`` commits numbered from ``first`` (told to ``after``)."""
    layout = RootLayout(root)
    seconds: list[float] = []
    for number in range(first, first + count):
        seconds.append(_commit(layout, number))
        if after is not None:
            after.after_commit()
    return statistics.median(seconds) * 1000


def _row(
    way: str, size: int, seconds: list[float], root: pathlib.Path, **extra: Any
) -> dict[str, Any]:
    recent = [s * 1000 for s in seconds[-100:]]
    return {
        "way": way,
        "commits": size,
        **_shape(root),
        "build_ms": statistics.median(recent) if recent else None,
        "build_max_ms": max(recent) if recent else None,
        **extra,
        "load": load(),
    }


def _on(base: pathlib.Path, sizes: list[int], samples: int, out: Table) -> list[dict[str, Any]]:
    root = base / "on"
    layout = RootLayout(root)
    compaction = AutoCompaction(layout, CompactionPolicy())
    exit_wait = _exit_wait(base / "exit")  # (before the handler: its compaction is not the build's)
    times = _CompactionTimes()
    logger = logging.getLogger("stemma.storage.auto_compaction")
    logger.addHandler(times)
    logger.setLevel(logging.DEBUG)
    rows: list[dict[str, Any]] = []
    seconds: list[float] = []
    made = 0
    try:
        for size in sizes:
            while made < size:
                seconds.append(_commit(layout, made))
                compaction.after_commit()
                made += 1
            built = seconds[:]
            compaction.wait()
            sampled = _samples(root, 10**9 + made, samples, compaction)
            compaction.wait()
            done = compaction.compactions
            row = _row(
                "on",
                size,
                built,
                root,
                commit_ms=sampled,
                compactions=len(done),
                compaction_ms=statistics.median(times.ms) if times.ms else None,
                compaction_max_ms=max(times.ms) if times.ms else None,
                exit_wait_ms=exit_wait if size == sizes[-1] else None,
            )
            out.row(row)
            rows.append(row)
        vacuumed = base / "on-vacuumed"
        shutil.copytree(root, vacuumed)
        vacuum_root(vacuumed, retain_hours=0, min_retain_hours=0, apply=True, force=True)
        row = _row(
            "on, vacuumed",
            made,
            [],
            vacuumed,
            commit_ms=_samples(vacuumed, 2 * 10**9, samples, None),
        )
        out.row(row)
        rows.append(row)
    finally:
        logger.removeHandler(times)
    return rows


def _exit_wait(root: pathlib.Path) -> float:
    """How long after its last commit a pass compacting 100 small files keeps a script waiting."""
    layout = RootLayout(root)
    policy = CompactionPolicy()
    compaction = AutoCompaction(layout, policy)
    for number in range(policy.small_files):
        _commit(layout, number)
    start = time.perf_counter()
    compaction.after_commit()  # the first commit a store is told of counts: 100 small files
    compaction.wait()
    return (time.perf_counter() - start) * 1000


def _off(
    base: pathlib.Path, sizes: list[int], real: int, samples: int, out: Table
) -> list[dict[str, Any]]:
    root = base / "off"
    layout = RootLayout(root)
    rows: list[dict[str, Any]] = []
    seconds: list[float] = []
    made = 0
    for size in [s for s in sizes if s <= real]:
        while made < size:
            seconds.append(_commit(layout, made))
            made += 1
        built = seconds[:]
        row = _row("off", size, built, root, commit_ms=_samples(root, 10**9 + made, samples, None))
        out.row(row)
        rows.append(row)
    for size in [s for s in sizes if s >= real]:
        synthesized = base / f"off-synthesized-{size}"
        _synthesize(synthesized, size)
        row = _row(
            "off, synthesized",
            size,
            [],
            synthesized,
            commit_ms=_samples(synthesized, 10**9, samples, None),
        )
        out.row(row)
        rows.append(row)
        shutil.rmtree(synthesized)
    return rows


def _synthesize(root: pathlib.Path, commits: int) -> None:
    """A table as ``commits`` commits without compaction leave it, written without committing.

    The first commit is real; every other is its data file copied under a new name and its log
    entry written again naming that file and a transaction of its own.
    """
    layout = RootLayout(root)
    _commit(layout, 0)
    path = _table(root)
    log = path / "_delta_log"
    actions = [json.loads(line) for line in (log / f"{1:020d}.json").read_text().splitlines()]
    (added,) = [a["add"] for a in actions if "add" in a]
    source = path / added["path"]
    for version in range(2, commits + 1):
        name = f"part-00000-{uuid.uuid4()}-c000.zstd.parquet"
        shutil.copyfile(source, path / name)
        lines: list[str] = []
        for action in actions:
            if "add" in action:
                action = {"add": {**action["add"], "path": name}}
            elif "txn" in action:
                action = {"txn": {**action["txn"], "appId": app_id(f"synth-{version}")}}
            lines.append(json.dumps(action))
        (log / f"{version:020d}.json").write_text("\n".join(lines) + "\n")
    DeltaTable(path).create_checkpoint()


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Build, measure and print each way; writes ``results/auto_compaction.json``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default=",".join(str(size) for size in SIZES))
    parser.add_argument("--real-off", type=int, default=2_000, metavar="N")
    parser.add_argument("--samples", type=int, default=20, metavar="N")
    args = parser.parse_args(argv)
    sizes = sorted(int(size) for size in args.sizes.split(","))
    out = Table(
        [
            ("way", "<16"),
            ("commits", ">7,d"),
            ("data_files", ">10,d"),
            ("log_files", ">9,d"),
            ("build_ms", ">8.1f"),
            ("build_max_ms", ">12.1f"),
            ("commit_ms", ">9.1f"),
            ("compactions", ">11,d"),
            ("compaction_ms", ">13.1f"),
            ("compaction_max_ms", ">17.1f"),
            ("exit_wait_ms", ">12.1f"),
        ]
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        base = pathlib.Path(tmp)
        rows = _on(base, sizes, args.samples, out)
        rows += _off(base, sizes, args.real_off, args.samples, out)
    print(f"[{load()}] {time.perf_counter() - started:.0f} s, on {os.cpu_count()} CPUs")
    write_results(
        "auto_compaction",
        config={
            "sizes": sizes,
            "real_off": args.real_off,
            "samples": args.samples,
            "table": ARTIFACT_INDEX.name,
            "policy": dataclasses.asdict(CompactionPolicy()),
        },
        rows=rows,
    )
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
