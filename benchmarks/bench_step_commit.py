"""Budget: a step's commit of 100,000 small artifacts at 100,000 artifacts/s, end to end.

``bench_commit`` times the store's wave commit on bundles it stages itself. This one runs the
real thing: a Pipeline step of ``UNITS`` units on the local backend, each making ``PER_UNIT``
tiny metric artifacts, with the operation's execution settings left at their defaults (packs
sized as they come back), and times the step's commit (``DeltaStore.commit_wave``, called once
by the step after its units are back) against the same step with one unit per pack
(``units_per_worker=1``, the old default). It also reports the step's wall time and how many
bundles each commit took.

    uv run python benchmarks/bench_step_commit.py [--units 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit it

from bench_ops import MakeMetrics, MetricsPerItem
from harness import Table, load, spread, write_results

from stemma.core.front.pipeline import Pipeline
from stemma.storage import DeltaStore

UNITS = 1_000
PER_UNIT = 100
WORKERS = 2
LAYOUTS: dict[str, dict[str, int]] = {
    "sized (default)": {},
    "one unit per pack": {"units_per_worker": 1},
}


class _CommitClock:
    """Times every ``DeltaStore.commit_wave`` call of this process (the step's commit)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, float]] = []
        self._original = DeltaStore.commit_wave

    def __enter__(self) -> _CommitClock:
        original = self._original

        def timed(store: DeltaStore, bundles: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(store, bundles, *args, **kwargs)
            finally:
                self.calls.append((len(bundles), time.perf_counter() - start))

        DeltaStore.commit_wave = timed  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        DeltaStore.commit_wave = self._original  # type: ignore[method-assign]


def _one(units: int, execution: dict[str, int]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        pipeline = Pipeline.create(
            "step-commit", root=pathlib.Path(tmp) / "root", max_workers=WORKERS
        )
        made = pipeline.run(MakeMetrics, params={"count": units})
        with _CommitClock() as clock:
            wall = time.perf_counter()
            result = pipeline.run(
                MetricsPerItem,
                params={"count": PER_UNIT},
                inputs={"items": made.output("metrics")},
                execution={"artifacts_per_unit": 1, **execution},
            )
            wall = time.perf_counter() - wall
        pipeline.finalize()
    assert result.success, result
    assert result.succeeded_count == units, result
    bundles, seconds = max(clock.calls)  # the step's wave (the largest call)
    return {"wall": wall, "commit": seconds, "bundles": bundles}


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Each layout's step commit in artifacts/s (median of repeats); writes the results."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=UNITS)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    table = Table(
        [
            ("layout", "<18"),
            ("bundles", ">7,d"),
            ("commit_s", ">9.2f"),
            ("artifacts_per_s", ">15,.0f"),
            ("step_wall_s", ">11.2f"),
        ]
    )
    rows: list[dict[str, Any]] = []
    for layout, execution in LAYOUTS.items():
        runs = [_one(args.units, execution) for _ in range(args.repeats)]
        commit = spread([r["commit"] for r in runs])
        wall = spread([r["wall"] for r in runs])
        artifacts = args.units * PER_UNIT
        row = {
            "layout": layout,
            "execution": execution,
            "units": args.units,
            "artifacts": artifacts,
            "bundles": int(sorted(r["bundles"] for r in runs)[len(runs) // 2]),
            "commit_s": commit["median"],
            "commit_seconds_spread": commit,
            "artifacts_per_s": artifacts / commit["median"],
            "step_wall_s": wall["median"],
            "step_wall_seconds_spread": wall,
            "budget_artifacts_per_second": 100_000,
            "met": artifacts / commit["median"] >= 100_000,
            "load": load(),
        }
        table.row(row)
        rows.append(row)
    write_results(
        "step_commit",
        config={"units": args.units, "artifacts_per_unit": PER_UNIT, "workers": WORKERS},
        rows=rows,
    )
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
