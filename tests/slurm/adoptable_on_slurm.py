"""A three-step pipeline on backend="slurm" whose middle step's units take a few seconds each.

``python adoptable_on_slurm.py ROOT SECONDS [BACKEND]``: generate 6 datasets, scale each after
sleeping SECONDS (one unit per element, 3 elements at a time), then transform the results.
Each time a unit of the middle step starts, it leaves a file named after its dataset in
``$STEMMA_TEST_RAN_DIR`` (``adoption_tasks``): a unit that ran twice leaves two. Prints the
run id on the first line and the finalize() summary as JSON on the last.
"""

import json
import sys

from adoption_tasks import CountedSlowScale

from stemma.core.examples import DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline


def main(root: str, seconds: float, backend: str) -> None:
    pipeline = Pipeline.create("adoptable", root=root, backend=backend)
    print(pipeline.run_id, flush=True)
    generated = pipeline.run(DataGenerator, params={"count": 6, "rows": 3})
    scaled = pipeline.run(
        CountedSlowScale,
        inputs={"dataset": generated.output("datasets")},
        params={"seconds": seconds},
        execution={"artifacts_per_unit": 1, "units_per_worker": 1, "max_workers": 3},
    )
    pipeline.run(Transform, inputs={"dataset": scaled.output("dataset")})
    print(json.dumps(pipeline.finalize()), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "slurm")
