"""Issues 19 and 34: the per-unit cost of a step, end to end, with default settings.

The whole job a user writes, timed in a fresh process each time: ``Pipeline.create``, one
``bench_ops.MakeMetrics`` step making N tiny metric artifacts, one step of N units over them with
``execution={"artifacts_per_unit": 1}`` and nothing else (packs sized by stemma, the default 2
local workers, the Delta store), then ``finalize``. Reported: wall ms per unit (wall ÷ N), the
median over ``--repeats`` processes, the step's own share, and the CPU of the job's whole
process tree (orchestrator and workers) per unit: on a loaded machine it moves less than wall.

``--unit`` picks the step's unit: ``noop`` (``bench_ops.NoOpUnit``: reads nothing, makes
nothing; issue 19), ``reads`` (``bench_ops.ReadsInput``: reads its input's content, makes one
metric with lineage; issue 34) or ``dry`` (``bench_ops.DryMakesOne``: the same without reading
its input, ``hydrate=False``). ``--unit reads,dry`` runs both, interleaved.

With ``--baseline COMMIT`` (default ``c670607``; ``none`` to skip), the same job also runs on
that commit's packages (a ``git archive`` into a temp dir, imported first through PYTHONPATH),
alternating with this checkout run by run, so the machine's load falls on both alike; the
ratio baseline ÷ this is of medians measured in the same run. ``--this`` runs a commit's
packages instead of the checkout's (in a checkout shared with others' unfinished edits, an A/B
of two commits measures only what they differ by); either may also be a folder holding
``packages/*/src``.

    uv run python benchmarks/bench_unit_cost.py [--sizes 1000,10000] [--repeats 3]
        [--baseline c670607] [--this COMMIT] [--unit noop|reads|dry|reads,dry]
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
UNITS = {"noop": "NoOpUnit", "reads": "ReadsInput", "dry": "DryMakesOne"}
"""``--unit``: the step's operation in ``bench_ops``."""


def one_job(units: int, unit: str = "noop") -> dict[str, Any]:
    """Run the whole job once in this process; its wall seconds (total and the units' step)."""
    import bench_ops
    from bench_ops import MakeMetrics

    import stemma.core
    from stemma.core.front.pipeline import Pipeline

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        pipeline = Pipeline.create("unit-cost", root=pathlib.Path(tmp) / "root")
        made = pipeline.run(MakeMetrics, params={"count": units})
        assert made.success, made.metadata
        step_started = time.perf_counter()
        result = pipeline.run(
            getattr(bench_ops, UNITS[unit]),
            inputs={"items": made.output("metrics")},
            execution={"artifacts_per_unit": 1},
        )
        step = time.perf_counter() - step_started
        assert result.success, result
        assert result.total_count == units, result
        pipeline.finalize()
        wall = time.perf_counter() - started
    cpu = os.times()  # (the workers were reaped at finalize: their CPU is the children's)
    return {
        "wall_s": wall,
        "step_s": step,
        "cpu_s": cpu.user + cpu.system + cpu.children_user + cpu.children_system,
        "stemma_core": str(pathlib.Path(stemma.core.__file__)),
    }


def job_env(checkout: pathlib.Path | None) -> dict[str, str]:
    """This environment, importing ``checkout``'s packages first when given."""
    env = dict(os.environ)
    if checkout is not None:
        sources = sorted(str(src) for src in checkout.glob("packages/*/src"))
        env["PYTHONPATH"] = os.pathsep.join(sources)
    return env


def run_job(units: int, checkout: pathlib.Path | None, unit: str = "noop") -> dict[str, Any]:
    """One fresh process running :func:`one_job`; its figures."""
    command = [sys.executable, str(pathlib.Path(__file__)), "--one", str(units), "--unit", unit]
    done = subprocess.run(command, capture_output=True, text=True, env=job_env(checkout))
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
    done.check_returncode()
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    expected = (checkout or HERE.parent).resolve()
    if not pathlib.Path(figures["stemma_core"]).resolve().is_relative_to(expected):
        raise RuntimeError(f"the job imported {figures['stemma_core']}, not from {expected}")
    return figures


def tree(given: str, into: pathlib.Path) -> pathlib.Path:
    """``given``'s packages: a folder holding ``packages/*/src`` as it is, or a commit's."""
    folder = pathlib.Path(given)
    if (folder / "packages").is_dir():
        return folder.resolve()
    into.mkdir(parents=True)
    return baseline_checkout(given, into)


def baseline_checkout(commit: str, into: pathlib.Path) -> pathlib.Path:
    """``commit``'s packages, extracted under ``into`` (``git archive``)."""
    archive = subprocess.run(
        ["git", "-C", str(HERE.parent), "archive", commit, "packages"],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def measure(
    units: int,
    repeats: int,
    baseline: pathlib.Path | None,
    unit: str = "noop",
    this: pathlib.Path | None = None,
) -> dict[str, Any]:
    """Medians over ``repeats`` fresh processes, alternating baseline and this checkout."""
    ours: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for _ in range(repeats):
        if baseline is not None:
            theirs.append(run_job(units, baseline, unit))
        ours.append(run_job(units, this, unit))
    row: dict[str, Any] = {
        "units": units,
        "unit": unit,
        "repeats": repeats,
        "workers": WORKERS,
        "load": load(),
    }
    for name, runs in (("this", ours), ("baseline", theirs)):
        row[f"{name}_ms_per_unit_runs"] = [r["wall_s"] / units * 1000 for r in runs]
    for name, runs in (("this", ours), ("baseline", theirs)):
        if not runs:
            continue
        wall = spread([r["wall_s"] for r in runs])
        step = spread([r["step_s"] for r in runs])
        row[f"{name}_wall_s"] = wall
        row[f"{name}_step_s"] = step
        row[f"{name}_cpu_s"] = spread([r["cpu_s"] for r in runs])
        row[f"{name}_ms_per_unit"] = wall["median"] / units * 1000
        row[f"{name}_step_ms_per_unit"] = step["median"] / units * 1000
    if theirs:
        row["baseline_over_this"] = row["baseline_ms_per_unit"] / row["this_ms_per_unit"]
    return row


def measure_kinds(
    units: int,
    repeats: int,
    baseline: pathlib.Path | None,
    kinds: list[str],
    this: pathlib.Path | None = None,
) -> list[dict[str, Any]]:
    """:func:`measure` for each unit kind, round by round so load falls on every kind alike."""
    rounds = [[measure(units, 1, baseline, kind, this) for kind in kinds] for _ in range(repeats)]
    return [_merged([r[k] for r in rounds], units) for k in range(len(kinds))]


def _merged(rows: list[dict[str, Any]], units: int) -> dict[str, Any]:
    """One row of medians from single-repeat rows of the same kind."""
    merged: dict[str, Any] = {**rows[0], "repeats": len(rows), "load": rows[-1]["load"]}
    for name in ("this", "baseline"):
        runs = [ms for row in rows for ms in row[f"{name}_ms_per_unit_runs"]]
        if not runs:
            continue
        merged[f"{name}_ms_per_unit_runs"] = runs
        for figure in ("wall_s", "step_s", "cpu_s"):
            merged[f"{name}_{figure}"] = spread([row[f"{name}_{figure}"]["median"] for row in rows])
        merged[f"{name}_ms_per_unit"] = merged[f"{name}_wall_s"]["median"] / units * 1000
        merged[f"{name}_step_ms_per_unit"] = merged[f"{name}_step_s"]["median"] / units * 1000
        merged[f"{name}_cpu_ms_per_unit"] = merged[f"{name}_cpu_s"]["median"] / units * 1000
    if "baseline_ms_per_unit" in merged:
        merged["baseline_over_this"] = merged["baseline_ms_per_unit"] / merged["this_ms_per_unit"]
    return merged


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Print ms per unit for each size; write ``results/unit_cost.json``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", default="c670607", help="a commit, a folder, or none")
    parser.add_argument(
        "--this", default=None, help="a commit or folder instead of this checkout's packages"
    )
    parser.add_argument("--unit", default="noop", help="noop, reads, dry, or a comma list")
    parser.add_argument("--name", default="unit_cost", help="results/<name>.json")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a job's own process
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(one_job(args.one, args.unit)))
        return []
    unit_kinds = args.unit.split(",")
    if unknown := [u for u in unit_kinds if u not in UNITS]:
        parser.error(f"--unit {','.join(unknown)}: not one of {', '.join(UNITS)}")
    table = Table(
        [
            ("unit", ">6"),
            ("units", ">7,d"),
            ("ms/unit", ">8.3f"),
            ("step ms/unit", ">12.3f"),
            ("CPU ms/unit", ">11.3f"),
            ("base ms/unit", ">12.3f"),
            ("base step", ">9.3f"),
            ("base CPU", ">8.3f"),
            ("base/this", ">9.2f"),
        ]
    )
    figures: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        baseline = None
        if args.baseline != "none":
            baseline = tree(args.baseline, pathlib.Path(tmp) / "baseline")
        this = None if args.this is None else tree(args.this, pathlib.Path(tmp) / "this")
        for size in (int(s) for s in args.sizes.split(",")):
            rows = measure_kinds(size, args.repeats, baseline, unit_kinds, this)
            figures += rows
            for row in rows:
                table.row(
                    {
                        "unit": row["unit"],
                        "units": size,
                        "ms/unit": row["this_ms_per_unit"],
                        "step ms/unit": row["this_step_ms_per_unit"],
                        "CPU ms/unit": row.get("this_cpu_ms_per_unit"),
                        "base ms/unit": row.get("baseline_ms_per_unit"),
                        "base step": row.get("baseline_step_ms_per_unit"),
                        "base CPU": row.get("baseline_cpu_ms_per_unit"),
                        "base/this": row.get("baseline_over_this"),
                    }
                )
    write_results(args.name, config=vars(args), rows=figures)
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
