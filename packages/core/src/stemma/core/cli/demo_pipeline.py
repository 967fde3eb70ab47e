"""The pipeline ``stemma demo`` runs: CSVs, a slow scale, a transform, metrics, filter, composite.

Generated CSV data on the embedded default store, about twenty seconds on two workers.

Also runnable on its own: ``stemma run stemma.core.cli.demo_pipeline``.
"""

from __future__ import annotations

import os

from stemma.core.examples import (
    DataGenerator,
    MetricCalculator,
    SlowScale,
    Transform,
    TransformThenScore,
)
from stemma.core.front.pipeline import Pipeline
from stemma.core.operations.builtins import Filter

DATASETS = 16
SECONDS_PER_DATASET = 1.0


def main() -> None:
    """Generate, scale slowly, scale again, score, keep the high scorers, score them again.

    (The slow step does real work: a slow *copy* would output its inputs' own artifacts.)
    """
    pipeline = Pipeline.create(
        "demo", backend=os.environ.get("STEMMA_BACKEND", "local"), max_workers=2
    )
    generated = pipeline.run(DataGenerator, params={"count": DATASETS, "rows": 200, "seed": 7})
    doubled = pipeline.submit(
        SlowScale,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": 2.0, "seconds": SECONDS_PER_DATASET},
    )
    scaled = pipeline.submit(
        Transform, inputs={"dataset": doubled.output("dataset")}, params={"scale": 0.25}
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
