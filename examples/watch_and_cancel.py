"""A pipeline slow enough to watch: generate, a slow scaling, transform, score.

Start it detached with ``stemma run --detach examples/watch_and_cancel.py`` (or in a terminal
of its own with ``python examples/watch_and_cancel.py``), then watch it with ``stemma tui`` or
``stemma watch slow``, and cancel it from the dashboard (``c``) or with ``stemma cancel``.
An optional argument sets the seconds each dataset's slow scaling takes (default 5). Every step
makes new data from its inputs, so each step's artifacts and lineage are its own.
"""

from __future__ import annotations

import sys

from stemma.core import Pipeline
from stemma.core.examples import DataGenerator, MetricCalculator, SlowScale, Transform


# --8<-- [start:pipeline]
def slow_pipeline(seconds: float) -> dict[str, object]:
    """Eight datasets scaled two at a time, ``seconds`` each: about ``4 * seconds`` to watch."""
    pipeline = Pipeline.create("slow", max_workers=2)
    print(f"run {pipeline.run_id}: watch it with `stemma watch slow` or `stemma tui`", flush=True)
    generated = pipeline.run(DataGenerator, params={"count": 8, "rows": 10})
    doubled = pipeline.run(
        SlowScale,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": 2.0, "seconds": seconds},
    )
    scaled = pipeline.run(
        Transform, inputs={"dataset": doubled.output("dataset")}, params={"scale": 10.0}
    )
    pipeline.run(MetricCalculator, inputs={"dataset": scaled.output("dataset")})
    return pipeline.finalize()
    # --8<-- [end:pipeline]


def main(argv: list[str]) -> None:
    """Run it; exit 1 unless every step succeeded (a cancelled run did not)."""
    summary = slow_pipeline(float(argv[0]) if argv else 5.0)
    print(f"overall success: {summary['overall_success']}")
    if not summary["overall_success"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
