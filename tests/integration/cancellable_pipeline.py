"""A three-step pipeline with a slow middle step, run in a subprocess by the cancellation tests.

``python cancellable_pipeline.py ROOT SECONDS [stubborn]``: generate 6 datasets, copy each after
sleeping SECONDS (2 workers, so 2 run while 4 wait; ``stubborn``: the copies ignore SIGTERM),
then transform the copies. Prints the run id on the
first line and the finalize() summary as JSON on the last.
"""

import json
import sys

from fault_operations import StubbornSlowCopy

from stemma.core.examples import DataGenerator, SlowCopy, Transform
from stemma.core.front.pipeline import Pipeline


def main(root: str, seconds: float, stubborn: bool) -> None:
    pipeline = Pipeline.create("cancellable", root=root, max_workers=2)
    print(pipeline.run_id, flush=True)
    generated = pipeline.run(DataGenerator, params={"count": 6, "rows": 5})
    copied = pipeline.run(
        StubbornSlowCopy if stubborn else SlowCopy,
        inputs={"dataset": generated.output("datasets")},
        params={"seconds": seconds},
    )
    pipeline.run(Transform, inputs={"dataset": copied.output("dataset")})
    print(json.dumps(pipeline.finalize()), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3:] == ["stubborn"])
