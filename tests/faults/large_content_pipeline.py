"""Two large data artifacts (kept as files) and a step that reads them: ``ROOT``.

Prints the data ids and the sizes the readers saw, as JSON, for a crash test to compare.
"""

from __future__ import annotations

import json
import sys

from benchmarks.bench_ops import MakeData, ReadsData
from stemma.core.front.pipeline import Pipeline
from stemma.storage.content_files import LARGE_CONTENT_BYTES

if __name__ == "__main__":
    pipeline = Pipeline.create("large", root=sys.argv[1], max_workers=1)
    made = pipeline.run(MakeData, params={"count": 2, "size": int(LARGE_CONTENT_BYTES * 1.05)})
    read = pipeline.run(ReadsData, inputs={"data": made.output("data")})
    summary = pipeline.finalize()
    loaded = pipeline.store.load_artifacts(pipeline.artifact_ids(read.output("sizes")))
    print(
        json.dumps(
            {
                "ok": summary["overall_success"],
                "data": sorted(pipeline.artifact_ids(made.output("data"))),
                "seen": sorted(json.loads(a.content or b"{}")["size"] for a in loaded.values()),
            }
        )
    )
