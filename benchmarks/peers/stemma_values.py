"""stemma's side of the N-value-task workload: each unit reads its input and makes one artifact.

The task of issue 34, the same for every tool: each task gets its input value and returns a
value, and the N results are read back and checked. stemma's task is a unit of
``bench_ops.ReadsInput`` over one input artifact: it reads the input's content (a small metric,
``{"i": i, "seed": s}``), and makes one metric with lineage (``{"i": i + 1, "tag": t}``), with
the execution settings left at their defaults (packs sized by stemma). The N inputs are made in
the timed part (one ``MakeMetrics`` unit), as Dask and Parsl make theirs; the N results are read
back from the store (``Pipeline.store``: ``step_outputs`` then ``load_artifacts`` with content)
and checked.

cold runs from ``Pipeline.create`` on (store, worker pool); warm makes N new inputs (another
seed) and runs a second step over them (another ``tag``) on the warm pool; cached opens a new
Pipeline on the same root and submits warm's two steps again, which the step cache answers, and
reads the results back again.
"""

from __future__ import annotations

import importlib.metadata
import json
import pathlib
from typing import Any

from bench_ops import MakeMetrics, ReadsInput

from stemma.core.front.pipeline import Pipeline
from stemma.core.records import StepStatus

VERSIONS = {"stemma-core": importlib.metadata.version("stemma-core")}


class StemmaValues:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n, self.root, self.workers = n, workdir / "stemma-root", workers
        self.pipeline: Any = None

    def _step(self, pipeline: Any, tag: int) -> Any:
        made = pipeline.run(MakeMetrics, params={"count": self.n, "seed": tag})
        result = pipeline.run(
            ReadsInput,
            params={"tag": tag},
            inputs={"items": made.output("metrics")},
            execution={"artifacts_per_unit": 1},
        )
        assert result.success, result
        assert result.total_count == self.n, result
        self._check(pipeline, result, tag)
        return result

    def _check(self, pipeline: Any, result: Any, tag: int) -> None:
        """Read the N results back from the store and check every value."""
        store = pipeline.store
        run_id = result.step_run_id
        if result.metadata["cache"] == "step":  # the outputs are the attempt's it reuses
            hit = store.latest_step(result.metadata["step_spec_id"], [StepStatus.COMPLETED])
            run_id = hit.metadata.get("outputs_from", hit.step_run_id)
        offered = store.step_outputs([run_id]).get(run_id, {})
        ids = offered.get("results", ())
        values = [json.loads(a.content) for a in store.load_artifacts(ids).values()]
        assert sorted(v["i"] for v in values) == list(range(1, self.n + 1)), len(values)
        assert all(v["tag"] == tag for v in values)

    def cold(self) -> None:
        self.pipeline = Pipeline.create("bench", root=self.root, max_workers=self.workers)
        self._step(self.pipeline, tag=0)

    def warm(self) -> None:
        self._step(self.pipeline, tag=1)
        self.pipeline.finalize()
        self.pipeline = None

    def cached(self) -> str:
        pipeline = Pipeline.create("bench", root=self.root, max_workers=self.workers)
        try:
            result = self._step(pipeline, tag=1)
            assert result.metadata["cache"] == "step", result.metadata
        finally:
            pipeline.finalize()
        return "new Pipeline on the same root; both steps answered by the step cache"

    def close(self) -> None:
        if self.pipeline is not None:
            self.pipeline.finalize()


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> StemmaValues:
    return StemmaValues(n, workdir, workers)
