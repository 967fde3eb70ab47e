"""A unit step of many quick units, so they share sized packs: ``python pack_pipeline.py ROOT``.

Run by ``test_worker_killed_after_staging.py`` with a worker killed just after it staged a pack
of several units. Prints, as JSON, the step's ids and counts. Importable by name, so spawned
workers find it.
"""

from __future__ import annotations

import json
import sys

from stemma.core.examples import DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline

UNITS = 24


def run_pipeline(root: str) -> dict[str, object]:
    """Run a creator of ``UNITS`` datasets and a transform of each, on one worker."""
    pipeline = Pipeline.create("packs", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": UNITS, "rows": 2, "seed": 3})
    scaled = pipeline.run(Transform, inputs={"dataset": generated.output("datasets")})
    pipeline.finalize()
    return {
        "succeeded": scaled.succeeded_count,
        "failed": scaled.failed_count,
        "status": scaled.metadata["status"],
    }


if __name__ == "__main__":
    print(json.dumps(run_pipeline(sys.argv[1])))
