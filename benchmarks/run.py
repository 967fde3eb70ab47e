"""Run every benchmark: ``python3 scripts/dev.py bench`` (or ``make bench``), or
``uv run python benchmarks/run.py [--large] [--peers]``.

The default run takes a few minutes on 2 cores. ``--large`` adds the big sizes (a 10^6-node
lower, a 10,000-unit dispatch step, the orchestrator's memory on a 10^6-unit step): about 45
minutes more. ``--peers`` adds the
comparison with Prefect, Dask, Snakemake and redun (``bench_peers.py``; it needs the
``bench-peers`` group: ``uv run --group bench-peers python benchmarks/run.py --peers``).
Every benchmark prints its table and writes ``benchmarks/results/<name>.json``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit it

import bench_cached_rerun
import bench_commit
import bench_content_id
import bench_dashboard
import bench_dispatch
import bench_lower
import bench_memory
import bench_peers
import bench_step_commit


def main(argv: list[str] | None = None) -> None:
    """Each benchmark prints its own table and writes its own JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--large", action="store_true", help="add the 10^6 sizes")
    parser.add_argument("--peers", action="store_true", help="add the peer comparison")
    args = parser.parse_args(argv)
    print("== lower(): graph size vs time ==")
    bench_lower.main(["--sizes", "1000,10000,100000" + (",1000000" if args.large else "")])
    print("\n== content ids vs raw xxh3_128 ==")
    bench_content_id.main()
    print("\n== commit throughput ==")
    bench_commit.main()
    print("\n== a step's commit, end to end (sized packs against one unit per pack) ==")
    bench_step_commit.main([])
    print("\n== local dispatch: orchestrator time per unit ==")
    bench_dispatch.main(["--sizes", "1000,10000" if args.large else "1000"])
    print("\n== fully cached rerun ==")
    bench_cached_rerun.main([])
    print("\n== orchestrator memory vs N ==")
    bench_memory.main(
        [
            "--lower-sizes",
            "1000,10000,100000,1000000",
            "--pipeline-sizes",
            "10000,100000" + (",1000000" if args.large else ""),
        ]
        if args.large
        else []
    )
    print("\n== the dashboard: first paint, refresh, idle CPU ==")
    bench_dashboard.main([])
    if args.peers:
        print("\n== peers: the same workloads in Prefect, Dask, Parsl, redun and Snakemake ==")
        bench_peers.main([])


if __name__ == "__main__":
    main(sys.argv[1:])
