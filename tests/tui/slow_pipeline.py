"""A pipeline slow enough to watch and cancel: `python slow_pipeline.py ROOT`.

Eight units of one second each on one worker, so a cancel lands while most wait in the queue.
"""

import sys

from stemma.core.operations.examples import DataGenerator, SlowCopy
from stemma.core.pipeline.pipeline import Pipeline


def main(root: str) -> None:
    pipeline = Pipeline.create("slow", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 8, "rows": 2})
    pipeline.run(SlowCopy, inputs={"dataset": generated.output("datasets")})
    pipeline.finalize()


if __name__ == "__main__":
    main(sys.argv[1])
