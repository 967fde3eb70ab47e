"""Issue 19: the per-unit cost of a no-op step, end to end, with default settings.

The whole job a user writes, timed in a fresh process each time: ``Pipeline.create``, one
``bench_ops.MakeMetrics`` step making N tiny metric artifacts, one ``bench_ops.NoOpUnit`` step
over them with ``execution={"artifacts_per_unit": 1}`` and nothing else (packs sized by stemma,
the default 2 local workers, the Delta store), then ``finalize``. Reported: wall ms per unit
(wall ÷ N), the median over ``--repeats`` processes, and the NoOpUnit step's own share.

With ``--baseline COMMIT`` (default ``c670607``; ``none`` to skip), the same job also runs on
that commit's packages (a ``git archive`` into a temp dir, imported first through PYTHONPATH),
alternating with this checkout run by run, so the machine's load falls on both alike; the
ratio baseline ÷ this is of medians measured in the same run.

    uv run python benchmarks/bench_unit_cost.py [--sizes 1000,10000] [--repeats 3]
        [--baseline c670607]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit it (bench_ops)

from harness import Table, load, spread, write_results

HERE = pathlib.Path(__file__).parent

WORKERS = 2
"""The Pipeline's default ``max_workers`` on this 2-core machine, said out loud."""


def one_job(units: int) -> dict[str, Any]:
    """Run the whole job once in this process; its wall seconds (total and the no-op step)."""
    from bench_ops import MakeMetrics, NoOpUnit

    import stemma.core
    from stemma.core.front.pipeline import Pipeline

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        pipeline = Pipeline.create("unit-cost", root=pathlib.Path(tmp) / "root")
        made = pipeline.run(MakeMetrics, params={"count": units})
        assert made.success, made.metadata
        step_started = time.perf_counter()
        result = pipeline.run(
            NoOpUnit, inputs={"items": made.output("metrics")}, execution={"artifacts_per_unit": 1}
        )
        step = time.perf_counter() - step_started
        assert result.success, result
        assert result.total_count == units, result
        pipeline.finalize()
        wall = time.perf_counter() - started
    return {"wall_s": wall, "step_s": step, "stemma_core": str(pathlib.Path(stemma.core.__file__))}


def job_env(checkout: pathlib.Path | None) -> dict[str, str]:
    """This environment, importing ``checkout``'s packages first when given."""
    env = dict(os.environ)
    if checkout is not None:
        sources = sorted(str(src) for src in checkout.glob("packages/*/src"))
        env["PYTHONPATH"] = os.pathsep.join(sources)
    return env


def run_job(units: int, checkout: pathlib.Path | None) -> dict[str, Any]:
    """One fresh process running :func:`one_job`; its figures."""
    command = [sys.executable, str(pathlib.Path(__file__)), "--one", str(units)]
    done = subprocess.run(command, capture_output=True, text=True, env=job_env(checkout))
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
    done.check_returncode()
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    expected = (checkout or HERE.parent).resolve()
    if not pathlib.Path(figures["stemma_core"]).resolve().is_relative_to(expected):
        raise RuntimeError(f"the job imported {figures['stemma_core']}, not from {expected}")
    return figures


def baseline_checkout(commit: str, into: pathlib.Path) -> pathlib.Path:
    """``commit``'s packages, extracted under ``into`` (``git archive``)."""
    archive = subprocess.run(
        ["git", "-C", str(HERE.parent), "archive", commit, "packages"],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def measure(units: int, repeats: int, baseline: pathlib.Path | None) -> dict[str, Any]:
    """Medians over ``repeats`` fresh processes, alternating baseline and this checkout."""
    ours: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for _ in range(repeats):
        if baseline is not None:
            theirs.append(run_job(units, baseline))
        ours.append(run_job(units, None))
    row: dict[str, Any] = {"units": units, "repeats": repeats, "workers": WORKERS, "load": load()}
    for name, runs in (("this", ours), ("baseline", theirs)):
        if not runs:
            continue
        wall = spread([r["wall_s"] for r in runs])
        step = spread([r["step_s"] for r in runs])
        row[f"{name}_wall_s"] = wall
        row[f"{name}_step_s"] = step
        row[f"{name}_ms_per_unit"] = wall["median"] / units * 1000
        row[f"{name}_step_ms_per_unit"] = step["median"] / units * 1000
    if theirs:
        row["baseline_over_this"] = row["baseline_ms_per_unit"] / row["this_ms_per_unit"]
    return row


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Print ms per unit for each size; write ``results/unit_cost.json``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", default="c670607")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a job's own process
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(one_job(args.one)))
        return []
    table = Table(
        [
            ("units", ">7,d"),
            ("ms/unit", ">8.3f"),
            ("step ms/unit", ">12.3f"),
            ("base ms/unit", ">12.3f"),
            ("base step", ">9.3f"),
            ("base/this", ">9.2f"),
        ]
    )
    figures: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        baseline = None
        if args.baseline != "none":
            baseline = baseline_checkout(args.baseline, pathlib.Path(tmp))
        for size in (int(s) for s in args.sizes.split(",")):
            row = measure(size, args.repeats, baseline)
            figures.append(row)
            table.row(
                {
                    "units": size,
                    "ms/unit": row["this_ms_per_unit"],
                    "step ms/unit": row["this_step_ms_per_unit"],
                    "base ms/unit": row.get("baseline_ms_per_unit"),
                    "base step": row.get("baseline_step_ms_per_unit"),
                    "base/this": row.get("baseline_over_this"),
                }
            )
    write_results("unit_cost", config=vars(args), rows=figures)
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
