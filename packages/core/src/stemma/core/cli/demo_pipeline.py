"""The pipeline ``stemma demo`` runs: CSVs, a slow copy, a transform, metrics, filter, composite.

Generated CSV data on the embedded default store, about twenty seconds on two workers.

Also runnable on its own: ``stemma run stemma.core.cli.demo_pipeline``.
"""

from __future__ import annotations

import os

from stemma.core.examples import (
    DataGenerator,
    MetricCalculator,
    SlowCopy,
    Transform,
    TransformThenScore,
)
from stemma.core.front.pipeline import Pipeline
from stemma.core.operations.builtins import Filter

DATASETS = 16
SECONDS_PER_COPY = 1.0


def main() -> None:
    """Generate, copy slowly, scale, score, keep the high scorers, then score them again."""
    pipeline = Pipeline.create(
        "demo", backend=os.environ.get("STEMMA_BACKEND", "local"), max_workers=2
    )
    generated = pipeline.run(DataGenerator, params={"count": DATASETS, "rows": 200, "seed": 7})
    copied = pipeline.submit(
        SlowCopy,
        inputs={"dataset": generated.output("datasets")},
        params={"seconds": SECONDS_PER_COPY},
    )
    scaled = pipeline.submit(
        Transform, inputs={"dataset": copied.output("dataset")}, params={"scale": 0.5}
    )
    scored = pipeline.submit(MetricCalculator, inputs={"dataset": scaled.output("dataset")})
    kept = pipeline.submit(
        Filter,
        inputs={"dataset": scaled.output("dataset"), "metrics": scored.output("metrics")},
        params={"criteria": [{"metric": "mean_y", "operator": "gt", "value": 2.4}]},
    )
    pipeline.submit(
        TransformThenScore, inputs={"dataset": kept.output("dataset")}, params={"scale": 3.0}
    )
    summary = pipeline.finalize()
    raise SystemExit(0 if summary["overall_success"] else 1)


if __name__ == "__main__":
    main()
