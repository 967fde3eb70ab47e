"""Budget: orchestrator memory flat in the number of units, 1,000,000 units under 1 GB (§9).

Each measurement runs in a fresh process (peak RSS only grows), and reports the RSS after the
imports (the baseline), and the peak RSS after the work:

- ``lower``: ``apply`` then ``lower()`` of a lattice of N handles (``bench_lower.lattice``), the
  whole lazy graph held in memory, the largest thing a lazy run keeps;
- ``pipeline``: the orchestrator of a Pipeline making N tiny artifacts (one unit) and running one
  no-op step of N units over them (``units_per_worker`` 500, 2 workers); ``after_inputs_mb`` is
  the peak once the N inputs are made, before the N-unit step.

The marginal memory per node or unit between two sizes is the figure to watch (flat in N means
about 0); the 1,000,000 budget is projected from it where 10^6 does not fit in the default
run's time (a 10^6 lattice takes about a minute and a few GB; a 10^6-unit step about 20
minutes on 2 cores: ``run.py --large`` measures it).

    uv run python benchmarks/bench_memory.py [--lower-sizes 1000,10000,100000,1000000]
        [--pipeline-sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit it

from harness import Table, load, peak_rss_mb, rss_mb, write_results

BUDGET_MB = 1000
BUDGET_UNITS = 1_000_000


def _child_lower(n: int) -> dict[str, Any]:
    from bench_lower import lattice

    from stemma.core import ArtifactStep, StepSpec, lower

    baseline = rss_mb()
    top = lattice(n)
    after_apply = peak_rss_mb()
    memo: dict[ArtifactStep, StepSpec] = {}
    lower(top, memo)
    return {"baseline_mb": baseline, "after_apply_mb": after_apply, "nodes": len(memo)}


def _child_pipeline(n: int) -> dict[str, Any]:
    from bench_ops import MakeMetrics, NoOpUnit

    from stemma.core.front.pipeline import Pipeline

    baseline = rss_mb()
    with tempfile.TemporaryDirectory() as tmp:
        pipeline = Pipeline.create("memory", root=pathlib.Path(tmp) / "root", max_workers=2)
        made = pipeline.run(MakeMetrics, params={"count": n})
        after_inputs = peak_rss_mb()
        result = pipeline.run(
            NoOpUnit,
            inputs={"items": made.output("metrics")},
            execution={"artifacts_per_unit": 1, "units_per_worker": 500},
        )
        assert result.success, result
        assert result.total_count == n, result
        pipeline.finalize()
    return {"baseline_mb": baseline, "after_inputs_mb": after_inputs, "units": n}


def child(kind: str, n: int) -> None:
    """In the fresh process: do the work, print the figures as one JSON line."""
    figures = _child_lower(n) if kind == "lower" else _child_pipeline(n)
    figures["peak_mb"] = peak_rss_mb()
    print(json.dumps(figures))


def measure(kind: str, n: int) -> dict[str, Any]:
    """Run one measurement in a fresh process."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(n)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{kind} N={n} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures.update(
        kind=kind, n=n, growth_mb=figures["peak_mb"] - figures["baseline_mb"], load=load()
    )
    return figures


def with_slope(row: dict[str, Any], smaller: dict[str, Any] | None) -> dict[str, Any]:
    """The marginal cost per item from the next smaller size, and the peak it projects at 10^6."""
    if smaller is None:
        return row
    slope = (row["peak_mb"] - smaller["peak_mb"]) / (row["n"] - smaller["n"])
    row["marginal_kb_per_item"] = slope * 1024
    row["projected_peak_mb_at_1m"] = row["peak_mb"] + slope * (BUDGET_UNITS - row["n"])
    return row


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Every size of both kinds; a table and ``results/memory.json``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--lower-sizes", default="1000,10000,100000")
    parser.add_argument("--pipeline-sizes", default="10000,100000")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "N"))
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return []
    table = Table(
        [
            ("kind", ">8"),
            ("N", ">9,d"),
            ("baseline MB", ">11.0f"),
            ("peak MB", ">8.0f"),
            ("marginal KB/item", ">16.2f"),
            ("10^6 MB (proj.)", ">15.0f"),
        ]
    )
    rows: list[dict[str, Any]] = []
    for kind, sizes in (("lower", args.lower_sizes), ("pipeline", args.pipeline_sizes)):
        smaller = None
        for n in (int(s) for s in sizes.split(",") if s):
            row = smaller = with_slope(measure(kind, n), smaller)
            rows.append(row)
            table.row(
                {
                    "kind": kind,
                    "N": n,
                    "baseline MB": row["baseline_mb"],
                    "peak MB": row["peak_mb"],
                    "marginal KB/item": row.get("marginal_kb_per_item"),
                    "10^6 MB (proj.)": row.get("projected_peak_mb_at_1m"),
                }
            )
    write_results("memory", config={**vars(args), "budget_mb_at_1m": BUDGET_MB}, rows=rows)
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
