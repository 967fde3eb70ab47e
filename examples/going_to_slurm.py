"""The first pipeline, on SLURM: the same steps, run as job arrays, building the same artifacts.

Run it with ``uv run python examples/going_to_slurm.py`` on a machine that can submit jobs
(``sbatch``, ``sacct``), with the root on a filesystem the compute nodes share. Pass ``local``
to run it on this machine instead: the artifact ids it prints are the same either way.
"""

from __future__ import annotations

import sys

from stemma.core import Pipeline
from stemma.core.examples import DataGenerator, MetricCalculator, Transform


# --8<-- [start:pipeline]
def going_to_slurm(backend: str) -> dict[str, object]:
    """The first pipeline's three steps, each one job array on ``backend="slurm"``."""
    pipeline = Pipeline.create("first", backend=backend, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 4, "rows": 20})
    transformed = pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": 2.0},
        # what each array element asks of its node: --cpus-per-task, --mem, --time
        resources={"cpus": 1, "memory_gb": 1, "time_limit": "00:10:00"},
        # 4 datasets, 2 per unit, 1 unit per element: an array of 2 elements
        execution={"artifacts_per_unit": 2, "units_per_worker": 1},
    )
    scored = pipeline.run(
        MetricCalculator,
        inputs={"dataset": transformed.output("dataset")},
        resources={"memory_gb": 1, "time_limit": "05:00"},
        # 4 units of 1 dataset, 4 units per element: one element runs them one after another
        execution={"units_per_worker": 4},
    )
    for result in (generated, transformed, scored):
        print(
            f"  #{result.step_number} {result.step_name:<20} {result.metadata['cache'] or 'ran':>4}"
            f"  {result.succeeded_count} ok, {result.failed_count} failed"
        )
    ids = sorted(pipeline.artifact_ids(scored.output("metrics")))
    print("  metrics:", " ".join(artifact_id[:8] for artifact_id in ids))
    return pipeline.finalize()
    # --8<-- [end:pipeline]


def main(argv: list[str]) -> None:
    """Run the pipeline on the backend named on the command line (``slurm`` by default)."""
    backend = argv[0] if argv else "slurm"
    print(f"on {backend}:")
    summary = going_to_slurm(backend)
    print(f"  overall success: {summary['overall_success']}")
    if not summary["overall_success"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
