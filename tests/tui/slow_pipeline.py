"""A pipeline slow enough to watch and cancel: `python slow_pipeline.py ROOT`.

Twelve units of one second each on one worker, so a cancel lands while most wait in the queue.
"""

import sys

from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline

UNITS = 12


def main(root: str) -> None:
    pipeline = Pipeline.create("slow", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": UNITS, "rows": 2})
    pipeline.run(SlowCopy, inputs={"dataset": generated.output("datasets")})
    pipeline.finalize()


def quick() -> None:
    """Two fast units on the root from $STEMMA_ROOT: what the dashboard's launch test starts."""
    pipeline = Pipeline.create("quick", max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 2})
    copy = {"dataset": generated.output("datasets")}
    pipeline.run(SlowCopy, inputs=copy, params={"seconds": 0.1})
    pipeline.finalize()


if __name__ == "__main__":
    main(sys.argv[1])
