"""A three-step pipeline on backend="slurm" with a slow middle step, for the cancellation tests.

``python cancellable_on_slurm.py ROOT SECONDS``: generate 4 datasets, copy each after sleeping
SECONDS (an array of 4 elements, 2 at a time), then transform the copies. Prints the run id on
the first line and the finalize() summary as JSON on the last.
"""

import json
import sys

from stemma.core.examples import DataGenerator, SlowCopy, Transform
from stemma.core.front.pipeline import Pipeline


def main(root: str, seconds: float) -> None:
    pipeline = Pipeline.create("cancellable", root=root, backend="slurm")
    print(pipeline.run_id, flush=True)
    generated = pipeline.run(DataGenerator, params={"count": 4, "rows": 5})
    copied = pipeline.run(
        SlowCopy,
        inputs={"dataset": generated.output("datasets")},
        params={"seconds": seconds},
        execution={"max_workers": 2},
    )
    pipeline.run(Transform, inputs={"dataset": copied.output("dataset")})
    print(json.dumps(pipeline.finalize()), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
