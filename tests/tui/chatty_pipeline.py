"""A pipeline whose units print while they run: `python chatty_pipeline.py ROOT`.

Two units, one worker; each writes ``tick N`` lines into its captured tool output every 0.1 s
for ``TICKS`` ticks, so the dashboard's follow mode has a live log to tail.
"""

import sys

from chatty_ops import ChattyCopy

from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline


def main(root: str) -> None:
    pipeline = Pipeline.create("chatty", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 2})
    pipeline.run(ChattyCopy, inputs={"dataset": generated.output("datasets")})
    pipeline.finalize()


if __name__ == "__main__":
    main(sys.argv[1])
