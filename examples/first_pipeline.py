"""The Pipeline front door: generate → transform → metrics, then the same run again, cached.

Run it with ``uv run python examples/first_pipeline.py``. Results go under ``.stemma/`` (or
``$STEMMA_ROOT``). The second pass finds every step already built: no unit executes.
"""

from __future__ import annotations

import time

from stemma.core import Pipeline
from stemma.core.examples import DataGenerator, MetricCalculator, Transform


def first_pipeline(scale: float) -> dict[str, object]:
    """Three steps; each one starts when the step it reads from is committed."""
    pipeline = Pipeline.create("first", max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 4, "rows": 20})
    transformed = pipeline.run(
        Transform, inputs={"dataset": generated.output("datasets")}, params={"scale": scale}
    )
    scored = pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    for result in (generated, transformed, scored):
        cache = result.metadata["cache"] or "ran"
        print(
            f"  #{result.step_number} {result.step_name:<20} {cache:>5}  "
            f"{result.succeeded_count} ok, {result.failed_count} failed, "
            f"{result.duration_seconds:.2f} s"
        )
    return pipeline.finalize()


def main() -> None:
    """Run the pipeline twice and show that the second run reuses everything."""
    for attempt in ("first run", "second run (cached)"):
        started = time.perf_counter()
        print(f"{attempt}:")
        summary = first_pipeline(scale=2.0)
        elapsed = time.perf_counter() - started
        print(f"  overall success: {summary['overall_success']} in {elapsed:.2f} s\n")


if __name__ == "__main__":
    main()
