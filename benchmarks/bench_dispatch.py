"""Budget: local dispatch costs at most 1 ms of orchestrator time per execution unit, amortized
over a step of 10,000 no-op units (benchmarks/README.md).

A generator step makes N tiny metric artifacts (and warms the worker pool; not timed), then one
step of the no-op creator ``bench_ops.NoOpUnit`` runs over them with ``artifacts_per_unit=1`` and
``units_per_worker=500``: N units. Measured for that step: wall time, and the orchestrator
process's CPU time (``time.process_time``: every thread of this process, Rust threads of polars
and delta-rs included, workers excluded), per unit. Each repeat uses a fresh store.

``--profile`` runs one more step under cProfile (on the step thread, where ``run_step`` runs)
and prints the top entries by cumulative and by own time.

    uv run python benchmarks/bench_dispatch.py [--sizes 1000,10000] [--repeats 3] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pathlib
import pstats
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit it

from bench_ops import MakeMetrics, NoOpUnit
from harness import Table, load, peak_rss_mb, spread, write_results

import stemma.core.engine.engine_run as pipeline_module
from stemma.core.front.pipeline import Pipeline

UNITS_PER_WORKER = 500
WORKERS = 2


def _one(units: int, profile: cProfile.Profile | None = None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        pipeline = Pipeline.create("dispatch", root=pathlib.Path(tmp) / "root", max_workers=WORKERS)
        made = pipeline.run(MakeMetrics, params={"count": units})
        assert made.success, made.metadata
        original = pipeline_module.run_step
        if profile is not None:

            def profiled(*args: Any) -> Any:
                return profile.runcall(original, *args)

            pipeline_module.run_step = profiled
        try:
            cpu, wall = time.process_time(), time.perf_counter()
            result = pipeline.run(
                NoOpUnit,
                inputs={"items": made.output("metrics")},
                execution={"artifacts_per_unit": 1, "units_per_worker": UNITS_PER_WORKER},
            )
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        finally:
            pipeline_module.run_step = original
        assert result.success, result
        assert result.total_count == units, result
        pipeline.finalize()
    return {"wall": wall, "cpu": cpu}


def measure(units: int, repeats: int) -> dict[str, Any]:
    """Medians over ``repeats`` fresh stores of one N-unit no-op step."""
    runs = [_one(units) for _ in range(repeats)]
    wall = spread([r["wall"] for r in runs])
    cpu = spread([r["cpu"] for r in runs])
    return {
        "units": units,
        "repeats": repeats,
        "units_per_worker": UNITS_PER_WORKER,
        "workers": WORKERS,
        "wall_s": wall,
        "orchestrator_cpu_s": cpu,
        "orchestrator_ms_per_unit": cpu["median"] / units * 1000,
        "wall_ms_per_unit": wall["median"] / units * 1000,
        "peak_rss_mb_so_far": peak_rss_mb(),
        "budget_orchestrator_ms_per_unit": 1.0,
        "met": cpu["median"] / units * 1000 <= 1.0,
        "load": load(),
    }


def profile(units: int, top: int = 25) -> str:
    """cProfile of one step's ``run_step`` (the orchestrator's step thread)."""
    prof = cProfile.Profile()
    _one(units, prof)
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs()
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Print orchestrator ms per unit for each size; write ``results/dispatch.json``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    figures: list[dict[str, Any]] = []
    table = Table(
        [
            ("units", ">7,d"),
            ("runs", ">4d"),
            ("wall s", ">8.2f"),
            ("wall ms/unit", ">12.3f"),
            ("orch. CPU s", ">11.2f"),
            ("orch. ms/unit", ">13.3f"),
            ("peak RSS MB", ">11.0f"),
        ]
    )
    for size in (int(s) for s in args.sizes.split(",")):
        row = measure(size, args.repeats)
        figures.append(row)
        table.row(
            {
                "units": size,
                "runs": args.repeats,
                "wall s": row["wall_s"]["median"],
                "wall ms/unit": row["wall_ms_per_unit"],
                "orch. CPU s": row["orchestrator_cpu_s"]["median"],
                "orch. ms/unit": row["orchestrator_ms_per_unit"],
                "peak RSS MB": row["peak_rss_mb_so_far"],
            }
        )
    write_results("dispatch", config=vars(args), rows=figures)
    if args.profile:
        print(profile(int(args.sizes.split(",")[0])))
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
