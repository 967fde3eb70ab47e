"""Budget: a fully cached rerun of 100 steps x 1,000 artifacts in under 2 s (benchmarks/README.md).

Builds, once per store, a chain of S steps: ``bench_ops.MakeMetrics`` making A tiny metric
artifacts, then S-1 ``bench_ops.NoOp`` passthrough curators, each over the previous step's A
artifacts (one unit per step, so the build stays cheap; a cached rerun never looks at units).
Then times an identical second run on the same root: ``Pipeline.create`` (recovery, backend,
provenance), every ``submit``, every result, and ``finalize``. Every step must be a step-cache
hit. Several reruns on the same store give the median (each adds S step events to it).

``--profile`` profiles one more rerun: every ``run_step`` call (on the step threads, run one at a
time with ``parallel_steps=1``) under its own cProfile, merged, and the main thread apart.

    uv run python benchmarks/bench_cached_rerun.py [--steps 100] [--artifacts 1000]
        [--repeats 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pathlib
import pstats
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit it

from bench_ops import MakeMetrics, NoOp
from harness import load, spread, write_results

import stemma.core.engine.engine_run as pipeline_module
from stemma.core.front.pipeline import Pipeline

WORKERS = 2


def run_chain(root: pathlib.Path, steps: int, artifacts: int, parallel_steps: int = 4) -> dict:
    """One run of the chain; returns its summary and phase timings."""
    t0 = time.perf_counter()
    pipeline = Pipeline.create(
        "rerun", root=root, max_workers=WORKERS, parallel_steps=parallel_steps
    )
    t1 = time.perf_counter()
    previous = pipeline.submit(MakeMetrics, params={"count": artifacts})
    futures = [previous]
    for _ in range(steps - 1):
        previous = pipeline.submit(
            NoOp,
            inputs={"items": previous.output("metrics" if previous is futures[0] else "items")},
            execution={"artifacts_per_unit": artifacts},
        )
        futures.append(previous)
    t2 = time.perf_counter()
    results = [future.result() for future in futures]
    t3 = time.perf_counter()
    summary = pipeline.finalize()
    t4 = time.perf_counter()
    assert summary["overall_success"], summary
    return {
        "wall": t4 - t0,
        "create": t1 - t0,
        "submit": t2 - t1,
        "results": t3 - t2,
        "finalize": t4 - t3,
        "cached": sum(1 for r in results if r.metadata["cache"] == "step"),
        "outputs": results[-1].succeeded_count,
    }


def profile_rerun(root: pathlib.Path, steps: int, artifacts: int, top: int = 30) -> str:
    """Merged cProfile of every step's ``run_step``, and of the main thread, for one rerun."""
    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()
    original = pipeline_module.run_step

    def profiled(*args: Any) -> Any:
        prof = cProfile.Profile()
        with lock:
            profiles.append(prof)
        return prof.runcall(original, *args)

    pipeline_module.run_step = profiled
    main = cProfile.Profile()
    try:
        main.runcall(run_chain, root, steps, artifacts, 1)
    finally:
        pipeline_module.run_step = original
    out = io.StringIO()
    stats = pstats.Stats(*profiles, stream=out).strip_dirs()
    out.write(f"== step threads: {len(profiles)} run_step calls ==\n")
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    out.write("== main thread (create, submit, wait, finalize) ==\n")
    pstats.Stats(main, stream=out).strip_dirs().sort_stats("cumulative").print_stats(top // 2)
    return out.getvalue()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Build once, time reruns; print medians and return the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--artifacts", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "root"
        build = run_chain(root, args.steps, args.artifacts)
        assert build["outputs"] == 1, build
        assert build["cached"] == 0, build
        reruns = [run_chain(root, args.steps, args.artifacts) for _ in range(args.repeats)]
        for rerun in reruns:
            assert rerun["cached"] == args.steps, rerun
        med = {k: statistics.median(r[k] for r in reruns) for k in reruns[0]}
        print(
            f"{args.steps} steps x {args.artifacts:,} artifacts: build {build['wall']:.1f} s; "
            f"cached rerun median of {args.repeats}: {med['wall']:.2f} s "
            f"(min {min(r['wall'] for r in reruns):.2f}, max {max(r['wall'] for r in reruns):.2f}; "
            f"create {med['create']:.2f}, submit {med['submit']:.2f}, "
            f"wait {med['results']:.2f}, finalize {med['finalize']:.2f}); "
            f"{med['wall'] / args.steps * 1000:.1f} ms per step   [{load()}]",
            flush=True,
        )
        if args.profile:
            print(profile_rerun(root, args.steps, args.artifacts))
    row = {
        "steps": args.steps,
        "artifacts": args.artifacts,
        "repeats": args.repeats,
        "build_s": build["wall"],
        "rerun_s": spread([r["wall"] for r in reruns]),
        "rerun_median_s": med["wall"],
        "rerun_create_s": med["create"],
        "rerun_submit_s": med["submit"],
        "rerun_wait_s": med["results"],
        "rerun_finalize_s": med["finalize"],
        "ms_per_step": med["wall"] / args.steps * 1000,
        "budget_s": 2.0,
        "met": med["wall"] < 2.0,
        "load": load(),
    }
    write_results("cached_rerun", config=vars(args), rows=[row])
    return row


if __name__ == "__main__":
    main(sys.argv[1:])
