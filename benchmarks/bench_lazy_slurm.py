"""Budget: a 1,000-step lazy graph on SLURM in at most 10 sbatch calls, one status query per poll.

Builds N no-op function steps and one step that reads them all (``peers/stemma_lazy``'s graph)
with ``run(..., backend="slurm")`` on the local cluster, and counts the SLURM commands the run
makes through logging wrappers put first on ``PATH`` (what a user's run would call, unchanged):
``sbatch`` (one per array), ``sacct`` (the poller's status queries) and ``squeue``. The steps
share resources, so the N ready steps go out as one wave; ``--max-workers`` caps its elements
(every element then runs several steps). The time is the whole run: building the graph,
submitting, waiting for the cluster, committing.

    python benchmarks/bench_lazy_slurm.py [--steps 1000] [--max-workers 8] [--repeats 1]

Needs the development cluster (``bash scripts/slurm-dev-cluster.sh start``).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # SLURM jobs import peers.* by name

from harness import Table, load, write_results
from peers.stemma_lazy import fanout

from stemma.core import run

COMMANDS = ("sbatch", "sacct", "squeue", "scancel")


def command_wrappers(directory: pathlib.Path, log: pathlib.Path) -> None:
    """Put a logging wrapper for each SLURM command in ``directory`` (first on PATH).

    Each call is one line of ``log``: the command's name, then its arguments.
    """
    for name in COMMANDS:
        real = shutil.which(name)
        if real is None:
            raise SystemExit(f"{name} not found: start the cluster (scripts/slurm-dev-cluster.sh)")
        wrapper = directory / name
        wrapper.write_text(f'#!/bin/sh\necho {name} "$@" >> "{log}"\nexec {real} "$@"\n')
        wrapper.chmod(0o755)


def one_run(steps: int, max_workers: int | None, workdir: pathlib.Path) -> dict[str, float]:
    log = workdir / "commands.log"
    bin_dir = workdir / "bin"
    bin_dir.mkdir()
    command_wrappers(bin_dir, log)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    try:
        started = time.perf_counter()
        (built,) = run(
            fanout(0, steps), root=workdir / "root", backend="slurm", max_workers=max_workers
        )
        seconds = time.perf_counter() - started
    finally:
        os.environ["PATH"] = os.environ["PATH"].split(os.pathsep, 1)[1]
    assert built.value is None
    assert not built.cached
    called = [line.split(" ")[0] for line in log.read_text().splitlines()] if log.exists() else []
    return {"seconds": seconds, **{name: called.count(name) for name in COMMANDS}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--max-workers", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    table = Table(
        [
            ("steps", ">6"),
            ("max_workers", ">11"),
            ("seconds", ">8.1f"),
            ("sbatch", ">6"),
            ("sacct", ">6"),
            ("squeue", ">6"),
            ("scancel", ">7"),
        ]
    )
    print(f"[{load()}] {args.steps} lazy steps + 1 on the local SLURM cluster")
    rows = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="bench lazy slurm ") as tmp:
            row = {
                "steps": args.steps,
                "max_workers": args.max_workers,
                **one_run(args.steps, args.max_workers, pathlib.Path(tmp)),
            }
        table.row(row)
        rows.append(row)
    summary = {
        "seconds_median": statistics.median(r["seconds"] for r in rows),
        "sbatch_max": max(r["sbatch"] for r in rows),
        "sacct_per_second": statistics.median(r["sacct"] / r["seconds"] for r in rows),
    }
    print(summary)
    write_results(
        "lazy_slurm",
        config={"steps": args.steps, "max_workers": args.max_workers, "repeats": args.repeats},
        rows=[*rows, {"summary": summary}],
    )


if __name__ == "__main__":
    main()
