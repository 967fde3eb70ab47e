"""stemma side by side with the tools users would pick instead, same workload, same run.

Two comparisons, each workload in a fresh process per repetition (``peers/workload.py``), the
tools interleaved so the machine's load falls on all of them alike, ``WORKERS`` = 2 workers each:

- ``tasks``: N no-op tasks, cold (framework start included), warm (a second batch of N in the
  same process) and cached (the warm batch again): stemma (one Pipeline step of N units over N
  inputs it makes in the timed part), Prefect 3, Dask distributed, Parsl (HTEX), redun;
- ``values``: N tasks that each get their input value and return a value, the N results read
  back and checked (issue 34): stemma (one Pipeline step of N units, each reading its input
  artifact's content and making one artifact, over N inputs it makes in the timed part, default
  settings; results read back from the store), Dask distributed, Parsl (HTEX);
- ``graph``: graph building, a dry run of N jobs and one top job: stemma's ``plan()`` against
  Snakemake's ``-n``.

Reported per tool and phase: wall time (median, and its spread), the orchestrator's CPU, the
whole process tree's CPU (workers, servers; needs psutil), the orchestrator's peak RSS, and
``peer ÷ stemma``: the peer's wall time over stemma's, per repetition, median (above 1: stemma
is faster). Peers come from the ``bench-peers`` dependency group:

    uv run --group bench-peers python benchmarks/bench_peers.py [--sizes 500] [--graph-sizes
        1000,10000] [--values-sizes 1000] [--repeats 3]
        [--tasks stemma_units,prefect_tasks,dask_tasks,parsl_tasks,redun_tasks]
        [--values stemma_values,dask_values,parsl_values]
        [--graph stemma_plan,snakemake_dryrun]

``--graph-sizes ""`` skips the graph comparison (``--sizes ""`` the tasks one,
``--values-sizes ""`` the values one).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
from typing import Any

from harness import Table, load, spread, write_results

HERE = pathlib.Path(__file__).parent
WORKLOAD = HERE / "peers" / "workload.py"
TASKS = "stemma_units,prefect_tasks,dask_tasks,parsl_tasks,redun_tasks"
GRAPH = "stemma_plan,snakemake_dryrun"
VALUES = "stemma_values,dask_values,parsl_values"
PEER_DISTRIBUTIONS = (
    "stemma-core",
    "prefect",
    "distributed",
    "parsl",
    "snakemake",
    "redun",
    "psutil",
)
FIGURES = ("wall_s", "cpu_s", "tree_cpu_s", "peak_rss_mb", "tree_rss_mb")


def _env(home: pathlib.Path) -> dict[str, str]:
    """Prefect in ephemeral mode with its state in ``home``, no telemetry, quiet logs."""
    # Installed tools import cached bytecode (pip and `uv sync --compile-bytecode` write it):
    # a shell with PYTHONDONTWRITEBYTECODE would compile every import from source, in every
    # worker, for every tool alike, and the cold figures would measure the compiler.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PREFECT_API_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        PREFECT_HOME=str(home / "prefect"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="300",
        PREFECT_LOGGING_LEVEL="WARNING",
        DO_NOT_TRACK="1",
        REDUN_CONFIG=str(home / "redun-config"),
    )
    return env


def run_once(module: str, n: int, timeout: float) -> dict[str, Any]:
    """One workload in a fresh process and a fresh folder; its figures, or its error."""
    with tempfile.TemporaryDirectory(prefix=f"bench-{module}-") as tmp:
        workdir = pathlib.Path(tmp)
        out, log = workdir / "result.json", workdir / "workload.log"
        argv = [sys.executable, str(WORKLOAD), module, str(n), str(workdir), str(out)]
        try:
            with log.open("wb") as sink:
                subprocess.run(
                    argv, cwd=workdir, env=_env(workdir), stdout=sink, stderr=subprocess.STDOUT,
                    timeout=timeout, check=False,
                )  # fmt: skip
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s"}
        if not out.exists():
            return {"error": "no result; log tail: " + log.read_text()[-1500:]}
        return json.loads(out.read_text())


def _error(message: str) -> str:
    if "No module named" in message:
        return message.split(":", 1)[-1].strip() + " (install: uv sync --group bench-peers)"
    return message.splitlines()[0][:160]


def summarize(module: str, runs: list[dict[str, Any]], base: list[dict[str, Any]]) -> list[dict]:
    """Per phase: medians and spread of every figure, and the per-repetition wall ratio."""
    errors = [r["error"] for r in runs if "error" in r]
    if errors:
        return [{"tool": module, "error": _error(errors[0]), "failed_runs": len(errors)}]
    rows: list[dict[str, Any]] = []
    for phase in runs[0]["phases"]:
        row: dict[str, Any] = {"tool": module, "phase": phase, "repeats": len(runs)}
        for figure in FIGURES:
            values = [r["phases"][phase].get(figure) for r in runs]
            if all(v is not None for v in values):
                row[figure] = spread(values)
        ratios = [
            r["phases"][phase]["wall_s"] / b["phases"][phase]["wall_s"]
            for r, b in zip(runs, base, strict=True)
            if "error" not in b and phase in b.get("phases", {})
        ]
        row["wall_ratio_to_stemma"] = statistics.median(ratios) if ratios else None
        row["import_s"] = statistics.median(r["import_s"] for r in runs)
        notes = {r["phases"][phase].get("note") for r in runs} - {None}
        if notes:
            row["note"] = sorted(notes)[0]
        rows.append(row)
    return rows


def warm_bytecode(modules: list[str], timeout: float) -> None:
    """Run every workload once at N=2, untimed, so each tool's bytecode is cached."""
    for module in modules:
        result = run_once(module, 2, timeout)
        print(f"  [{load()}] bytecode warmed: {module}{' (failed)' if 'error' in result else ''}")


def compare(group: str, modules: list[str], n: int, repeats: int, timeout: float) -> list[dict]:
    """Every module ``repeats`` times, interleaved (the order rotates each round)."""
    warm_bytecode(modules, timeout)
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in modules}
    for round_ in range(repeats):
        order = modules[round_ % len(modules) :] + modules[: round_ % len(modules)]
        for module in order:
            runs[module].append(run_once(module, n, timeout))
            print(f"  [{load()}] {group} N={n:,} round {round_ + 1}: {module} done", flush=True)
    base = runs[modules[0]]
    rows = [row for m in modules for row in summarize(m, runs[m], base)]
    for row in rows:
        row.update(group=group, n=n, load=load())
    return rows


TABLE = [
    ("group", ">6"),
    ("N", ">7,d"),
    ("tool", ">17"),
    ("phase", ">6"),
    ("wall s", ">8.2f"),
    ("± s", ">6.2f"),
    ("ms/task", ">8.2f"),
    ("orch CPU s", ">10.2f"),
    ("tree CPU s", ">10.2f"),
    ("peak RSS MB", ">11.0f"),
    ("peer÷stemma", ">11.2f"),
]


def _printable(row: dict[str, Any]) -> dict[str, Any]:
    if "error" in row:
        return {"group": row["group"], "N": row["n"], "tool": row["tool"], "phase": "FAILED"}
    med = {f: row[f]["median"] for f in FIGURES if f in row}
    return {
        "group": row["group"],
        "N": row["n"],
        "tool": row["tool"],
        "phase": row["phase"],
        "wall s": med["wall_s"],
        "± s": row["wall_s"]["max"] - row["wall_s"]["min"],
        "ms/task": med["wall_s"] / row["n"] * 1000,
        "orch CPU s": med.get("cpu_s"),
        "tree CPU s": med.get("tree_cpu_s"),
        "peak RSS MB": med.get("peak_rss_mb"),
        "peer÷stemma": None if row["tool"].startswith("stemma") else row["wall_ratio_to_stemma"],
    }


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Every comparison at each of its sizes; a table and ``results/peers.json``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="500", help="N for the tasks comparison")
    parser.add_argument("--graph-sizes", default="1000,10000", help="N for graph building")
    parser.add_argument("--values-sizes", default="1000", help="N for the values comparison")
    parser.add_argument("--values", default=VALUES, help="stemma first: ratios are to it")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", default=TASKS, help="stemma first: ratios are to it")
    parser.add_argument("--graph", default=GRAPH, help="stemma first: ratios are to it")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per workload run")
    parser.add_argument("--name", default="peers", help="results/<name>.json")
    args = parser.parse_args(argv)
    plan = [
        ("tasks", args.tasks, args.sizes),
        ("values", args.values, args.values_sizes),
        ("graph", args.graph, args.graph_sizes),
    ]
    rows: list[dict[str, Any]] = []
    for group, modules, sizes in plan:
        for n in (int(s) for s in sizes.split(",") if s):
            rows += compare(group, modules.split(","), n, args.repeats, args.timeout)
    table = Table(TABLE)
    for row in rows:
        table.row(_printable(row))
    for row in rows:
        if "error" in row:
            print(f"{row['tool']} (N={row['n']:,}) failed: {row['error']}")
    write_results(args.name, config=vars(args), rows=rows, distributions=PEER_DISTRIBUTIONS)
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
