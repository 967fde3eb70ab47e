"""The pipeline the stateful model test drives, run in a subprocess as a user's script would be.

``python model_pipeline.py ROOT INPUTS SCALE SECONDS [RUN_ID]``: ingest every ``*.csv`` of the
folder INPUTS, scale each dataset by SCALE after sleeping SECONDS (one unit per dataset, two
workers, so a cancel or a kill lands while some units run and others wait), then transform the
scaled datasets. With RUN_ID it resumes that run (``Pipeline.resume``) instead of starting one.
It prints the run id on its first line and the ``finalize()`` summary as JSON on its last.
"""

from __future__ import annotations

import json
import pathlib
import sys

from stemma.core.examples import SlowScale, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.operations.builtins import IngestData


def main(root: str, inputs: str, scale: float, seconds: float, resume: str | None) -> None:
    """Run (or resume) the three steps on ``root``; print the run id, then the summary."""
    if resume:
        pipeline = Pipeline.resume(root, resume, max_workers=2)
    else:
        pipeline = Pipeline.create("model", root=root, max_workers=2)
    print(pipeline.run_id, flush=True)
    paths = sorted(str(path) for path in pathlib.Path(inputs).glob("*.csv"))
    ingested = pipeline.run(IngestData, params={"paths": paths})
    scaled = pipeline.run(
        SlowScale,
        inputs={"dataset": ingested.output("data")},
        params={"scale": scale, "seconds": seconds},
    )
    pipeline.run(Transform, inputs={"dataset": scaled.output("dataset")}, params={"scale": 0.5})
    print(json.dumps(pipeline.finalize()), flush=True)


if __name__ == "__main__":
    main(
        sys.argv[1],
        sys.argv[2],
        float(sys.argv[3]),
        float(sys.argv[4]),
        (sys.argv[5:] or [None])[0],
    )
