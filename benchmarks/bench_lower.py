"""Budget: ``lower()`` of a 100,000-node graph in under 1 s, linear in nodes (DESIGN.md §9).

Graphs are layered: each node depends on two nodes of the layer below (a lattice, so shared deps
and diamonds are everywhere). Building the handles (``apply``) is timed apart from lowering.
Reports the median of several runs per size and the per-node cost, whose flatness across sizes
is the linearity check.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

from stemma.core import OUT, ArtifactStep, StepSpec, apply, lower

WIDTH = 100


def _combine(left: object, right: object, scale: float, out_path: str) -> None:
    """Never called: lowering runs no user code."""


def build(nodes: int) -> ArtifactStep:
    """A lattice of about ``nodes`` handles, ``WIDTH`` wide, with one top node."""
    layer = [
        apply(name=f"b/{i}", fn=_combine, version="v0", left=i, right=0, scale=1.0, out_path=OUT)
        for i in range(WIDTH)
    ]
    made = WIDTH
    depth = 0
    while made < nodes - 1:
        depth += 1
        layer = [
            apply(
                name=f"n/{depth}/{i}",
                fn=_combine,
                version="v0",
                left=layer[i],
                right=layer[(i + 1) % WIDTH],
                scale=0.5,
                out_path=OUT,
            )
            for i in range(WIDTH)
        ]
        made += WIDTH
    return apply(
        name="top", fn=_combine, version="v0", left=layer, right=None, scale=1.0, out_path=OUT
    )


def measure(nodes: int, repeats: int) -> dict[str, float]:
    """Median seconds to build and to lower a graph of ``nodes`` handles."""
    build_times: list[float] = []
    lower_times: list[float] = []
    count = 0
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        top = build(nodes)
        t1 = time.perf_counter()
        memo: dict[ArtifactStep, StepSpec] = {}
        lower(top, memo)
        t2 = time.perf_counter()
        count = len(memo)
        build_times.append(t1 - t0)
        lower_times.append(t2 - t1)
        del top, memo
    lowered = statistics.median(lower_times)
    return {
        "nodes": count,
        "apply_s": statistics.median(build_times),
        "lower_s": lowered,
        "lower_us_per_node": lowered / count * 1e6,
    }


def main(argv: list[str]) -> list[dict[str, float]]:
    """Run the sizes given (default 10k, 100k, 1M) and print a table."""
    sizes = [int(a) for a in argv] or [10_000, 100_000, 1_000_000]
    rows: list[dict[str, float]] = []
    print(f"{'nodes':>10} {'apply (s)':>10} {'lower (s)':>10} {'µs/node':>8}")
    for size in sizes:
        row = measure(size, repeats=5 if size <= 100_000 else 3)
        rows.append(row)
        print(
            f"{row['nodes']:>10,.0f} {row['apply_s']:>10.3f} {row['lower_s']:>10.3f} "
            f"{row['lower_us_per_node']:>8.2f}"
        )
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
