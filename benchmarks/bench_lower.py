"""Budget: ``lower()`` of a 100,000-node graph in under 1 s, linear in nodes (benchmarks/README.md).

Three shapes of about N handles each:

- ``chain``: each node depends on the one before (depth N);
- ``fanout``: N independent leaves and one top node depending on all of them;
- ``lattice``: layers ``WIDTH`` wide, each node depending on two nodes of the layer below, so
  shared deps and diamonds are everywhere, and one top node over the last layer.

Building the handles (``apply``) is timed apart from lowering (one memo). The per-node cost's
flatness across sizes is the linearity check. Wall time is the budget; CPU time
(``process_time``) is shown beside it because on a loaded machine it is the steadier one.

    uv run python benchmarks/bench_lower.py [--sizes 1000,10000,100000,1000000]
        [--shapes chain,fanout,lattice] [--repeats 5]
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable

from harness import Table, load, measure, spread, write_results

from stemma.core import OUT, ArtifactStep, StepSpec, apply, lower

WIDTH = 100
DEFAULT_SIZES = "1000,10000,100000"


def _combine(left: object, right: object, scale: float, out_path: str) -> None:
    """Never called: lowering runs no user code."""


def _node(name: str, left: object, right: object = None, scale: float = 0.5) -> ArtifactStep:
    return apply(
        name=name, fn=_combine, version="v0", left=left, right=right, scale=scale, out_path=OUT
    )


def chain(nodes: int) -> ArtifactStep:
    """``nodes`` handles, each depending on the previous one."""
    node = _node("c/0", 0)
    for i in range(1, nodes):
        node = _node(f"c/{i}", node)
    return node


def fanout(nodes: int) -> ArtifactStep:
    """``nodes - 1`` leaves and one top node over all of them."""
    return _node("top", [_node(f"f/{i}", i) for i in range(nodes - 1)])


def lattice(nodes: int) -> ArtifactStep:
    """About ``nodes`` handles, ``WIDTH`` wide, with one top node."""
    layer = [_node(f"b/{i}", i, 0, 1.0) for i in range(WIDTH)]
    made, depth = WIDTH, 0
    while made < nodes - 1:
        depth += 1
        layer = [_node(f"n/{depth}/{i}", layer[i], layer[(i + 1) % WIDTH]) for i in range(WIDTH)]
        made += WIDTH
    return _node("top", layer, None, 1.0)


SHAPES: dict[str, Callable[[int], ArtifactStep]] = {
    "chain": chain,
    "fanout": fanout,
    "lattice": lattice,
}


def measure_shape(shape: str, nodes: int, repeats: int) -> dict[str, object]:
    """Build and lower one shape ``repeats`` times; medians and spread."""
    build_s: list[float] = []
    lower_s: list[float] = []
    lower_cpu: list[float] = []
    count = 0
    for _ in range(repeats):
        gc.collect()
        with measure() as built:
            top = SHAPES[shape](nodes)
        memo: dict[ArtifactStep, StepSpec] = {}
        with measure() as lowered:
            lower(top, memo)
        count = len(memo)
        build_s.append(built.wall)
        lower_s.append(lowered.wall)
        lower_cpu.append(lowered.cpu)
        del top, memo
    low = spread(lower_s)
    return {
        "shape": shape,
        "nodes": count,
        "repeats": repeats,
        "apply_s": spread(build_s),
        "lower_s": low,
        "lower_cpu_s": spread(lower_cpu),
        "lower_median_s": low["median"],
        "lower_us_per_node": low["median"] / count * 1e6,
        "lower_spread_s": low["max"] - low["min"],
        "load": load(),
    }


def main(argv: list[str] | None = None) -> list[dict[str, object]]:
    """Each shape at each size: a printed table and ``results/lower.json``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default=DEFAULT_SIZES)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rows: list[dict[str, object]] = []
    table = Table(
        [
            ("shape", ">8"),
            ("nodes", ">10,.0f"),
            ("apply s", ">8.3f"),
            ("lower s", ">8.3f"),
            ("spread s", ">8.3f"),
            ("lower CPU s", ">11.3f"),
            ("µs/node", ">8.2f"),
        ]
    )
    for size in (int(s) for s in args.sizes.split(",")):
        for shape in args.shapes.split(","):
            row = measure_shape(shape, size, args.repeats if size <= 100_000 else 3)
            rows.append(row)
            table.row(
                {
                    "shape": shape,
                    "nodes": row["nodes"],
                    "apply s": row["apply_s"]["median"],  # type: ignore[index]
                    "lower s": row["lower_median_s"],
                    "spread s": row["lower_spread_s"],
                    "lower CPU s": row["lower_cpu_s"]["median"],  # type: ignore[index]
                    "µs/node": row["lower_us_per_node"],
                }
            )
    write_results("lower", config=vars(args), rows=rows)
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
