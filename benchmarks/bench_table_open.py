"""Issue 21: opening a Delta table against the number of commits it has had.

One table of a real root (``orchestration/executions``) grows by stemma's own commit path, one
row per commit (``commit_frames``: the table lock, the application transaction that makes the
commit idempotent, the append; what every wave commit does), to each size in ``--sizes``. Every
``--compact-every`` commits (1,000), once measured, the root is compacted (``compact_root``, as
the weekly routine of docs/how-to/clean-up-a-root.md does): a commit's cost grows with the
table's data files, one per commit, and would make the build take an hour; so the table has
about as many data files at 10,000 commits as at 1,000, and only its log differs. At each size
the table is measured three ways, each on its own copy of the log (data files are hard links,
so the copies cost little):

- ``checkpointed``: the table as committed. delta-rs writes a checkpoint every 100 commits and
  removes log entries only once they are 30 days old, so every commit file is still there.
- ``no checkpoint``: the same log without its checkpoints: a reader replays every commit.
- ``vacuumed``: after ``vacuum_root(..., apply=True)``, which removes the log entries before
  the newest checkpoint.

Per way: the time to open the table (``DeltaTable(path)``, what ``table_handle`` does first), to
read it (stemma's scan, every row), to commit one more row to it (``way_commit_ms``, median of
``--commits``, through the same path), the files in ``_delta_log`` and the commits a reader
replays; per size, a commit's time during the build (median of the last 100 before it) and a
checkpoint's.

``--handles N`` instead times N commits to each of two tables, one commit to each in turn: one
through a handle that is only ever caught up (what ``table_handle`` did before it reopened a
handle that lags the newest checkpoint), one through ``table_handle`` as it is; it prints the
median commit time of each hundred commits.

    uv run python benchmarks/bench_table_open.py [--sizes 100,1000,10000] [--repeats 5]
    uv run python benchmarks/bench_table_open.py --handles 2000
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from deltalake import DeltaTable
from harness import Table, load, spread, write_results

from stemma.core.store.locations import RootLayout
from stemma.storage import table_handles
from stemma.storage.commit import app_id, commit_frames
from stemma.storage.delta_log import commits_since_checkpoint
from stemma.storage.maintenance import compact_root, vacuum_root
from stemma.storage.schemas import EXECUTIONS
from stemma.storage.table_places import table_place
from stemma.storage.tables import scan_table

SIZES = (100, 1_000, 10_000)
_NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def _commit(layout: RootLayout, number: int) -> None:
    row = {
        "execution_run_id": f"run-{number}",
        "execution_spec_id": f"spec-{number}",
        "step_run_id": "step-run",
        "step_spec_id": "step-spec",
        "step_name": "bench",
        "step_number": 0,
        "started_at": _NOW,
        "ended_at": _NOW,
        "success": True,
    }
    commit_frames(layout, {EXECUTIONS: EXECUTIONS.frame([row])}, app_id(f"bench-{number}"))


def _copy_root(root: pathlib.Path, to: pathlib.Path) -> pathlib.Path:
    """The root again: its logs copied (a way may delete from them), its data files linked."""

    def link_or_copy(source: str, target: str) -> None:
        if "_delta_log" in pathlib.Path(source).parts:
            shutil.copy2(source, target)
        else:
            os.link(source, target)

    shutil.copytree(root, to, copy_function=link_or_copy)
    return to


def _without_checkpoints(root: pathlib.Path) -> None:
    log = EXECUTIONS.path(RootLayout(root).delta) / "_delta_log"
    for path in log.iterdir():
        if ".checkpoint." in path.name or path.name == "_last_checkpoint":
            path.unlink()


def _vacuumed(root: pathlib.Path) -> None:
    vacuum_root(root, retain_hours=0, min_retain_hours=0, apply=True)


def _timed(action: Callable[[], object], repeats: int) -> dict[str, Any]:
    seconds: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - start)
    return spread([s * 1000 for s in seconds])


def _measure(root: pathlib.Path, repeats: int, commits: int) -> dict[str, Any]:
    layout = RootLayout(root)
    path = EXECUTIONS.path(layout.delta)
    place = table_place(layout, EXECUTIONS.name)
    found: dict[str, Any] = {
        "log_files": len(list((path / "_delta_log").iterdir())),
        "data_files": len(DeltaTable(path).file_uris()),
        "replayed_commits": commits_since_checkpoint(path),
        "rows": scan_table(DeltaTable(path), place).collect().height,
    }
    opened = _timed(lambda: DeltaTable(path), repeats)
    read = _timed(lambda: scan_table(DeltaTable(path), place).collect(), repeats)
    numbers = iter(range(10**9, 10**9 + commits))  # new application transactions
    committed = _timed(lambda: _commit(layout, next(numbers)), commits)  # last: it adds commits
    return {
        **found,
        "open_ms": opened["median"],
        "open_ms_spread": opened,
        "read_ms": read["median"],
        "read_ms_spread": read,
        "way_commit_ms": committed["median"],
        "way_commit_ms_spread": committed,
    }


WAYS: dict[str, Callable[[pathlib.Path], None] | None] = {
    "checkpointed": None,
    "no checkpoint": _without_checkpoints,
    "vacuumed": _vacuumed,
}


def _checkpoint_ms(root: pathlib.Path) -> float:
    table = DeltaTable(EXECUTIONS.path(RootLayout(root).delta))
    start = time.perf_counter()
    table.create_checkpoint()
    return (time.perf_counter() - start) * 1000


def _handles(commits: int) -> list[dict[str, Any]]:
    """Commit times through a handle only ever caught up, and through ``table_handle``'s."""
    reopened = table_handles.REOPEN_AFTER_COMMITS
    never = 10**12  # a handle this far behind is never reopened: the behaviour before
    table = Table([("commits", ">7,d"), ("caught_up_ms", ">12.1f"), ("reopened_ms", ">11.1f")])
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        layouts = {
            "caught_up": (RootLayout(pathlib.Path(tmp) / "a"), never),
            "reopened": (RootLayout(pathlib.Path(tmp) / "b"), reopened),
        }
        seconds: dict[str, list[float]] = {name: [] for name in layouts}
        try:
            for number in range(commits):
                for name, (layout, interval) in layouts.items():
                    table_handles.REOPEN_AFTER_COMMITS = interval
                    start = time.perf_counter()
                    _commit(layout, number)
                    seconds[name].append(time.perf_counter() - start)
                if (number + 1) % 100 == 0:
                    row: dict[str, Any] = {"commits": number + 1, "load": load()}
                    for name in layouts:
                        row[f"{name}_ms"] = statistics.median(seconds[name][-100:]) * 1000
                    table.row(row)
                    rows.append(row)
        finally:
            table_handles.REOPEN_AFTER_COMMITS = reopened
    write_results("table_open_handles", config={"commits": commits}, rows=rows)
    return rows


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Build the table up to each size, measure each way there; writes the results."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default=",".join(str(size) for size in SIZES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--commits", type=int, default=20, metavar="N")
    parser.add_argument("--compact-every", type=int, default=1_000, metavar="N")
    parser.add_argument("--handles", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    if args.handles:
        return _handles(args.handles)
    sizes = sorted(int(size) for size in args.sizes.split(","))
    table = Table(
        [
            ("commits", ">7,d"),
            ("way", "<13"),
            ("log_files", ">9,d"),
            ("data_files", ">10,d"),
            ("replayed_commits", ">16,d"),
            ("open_ms", ">8.1f"),
            ("read_ms", ">9.1f"),
            ("way_commit_ms", ">13.1f"),
            ("commit_ms", ">9.1f"),
            ("checkpoint_ms", ">13.1f"),
        ]
    )
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "root"
        layout = RootLayout(root)
        made = 0
        build_start = time.perf_counter()
        for size in sizes:
            commit_seconds: list[float] = []
            while made < size:
                start = time.perf_counter()
                _commit(layout, made)
                commit_seconds.append(time.perf_counter() - start)
                made += 1
                if made % args.compact_every == 0 and made < size:
                    compact_root(root)
            built_s = time.perf_counter() - build_start
            recent = commit_seconds[-100:]
            spare = _copy_root(root, pathlib.Path(tmp) / f"{size}-checkpoint")
            checkpoint_ms = _checkpoint_ms(spare)
            shutil.rmtree(spare)
            for n, (way, prepare) in enumerate(WAYS.items()):
                copy = _copy_root(root, pathlib.Path(tmp) / f"{size}-{n}")
                if prepare is not None:
                    prepare(copy)
                row = {
                    "commits": size,
                    "way": way,
                    **_measure(copy, args.repeats, args.commits),
                    "commit_ms": statistics.median(recent) * 1000,
                    "built_s": built_s,
                    "load": load(),
                }
                if way == "checkpointed":
                    row["checkpoint_ms"] = checkpoint_ms
                table.row(row)
                rows.append(row)
                shutil.rmtree(copy)
            if made % args.compact_every == 0:
                compact_root(root)
    write_results(
        "table_open",
        config={
            "sizes": sizes,
            "repeats": args.repeats,
            "commits": args.commits,
            "compact_every": args.compact_every,
            "table": EXECUTIONS.name,
        },
        rows=rows,
    )
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
