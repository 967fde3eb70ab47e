"""stemma's side of the N-no-op-task workload: one Pipeline step of N no-op execution units.

A unit is stemma's task. The N units need N input artifacts: cold makes them (one
``MakeMetrics`` unit) and runs the no-op step over them, from ``Pipeline.create`` on (store,
worker pool); warm makes N new inputs and runs a second no-op step over them (another ``tag``,
so other fingerprints) on the warm pool; cached opens a new Pipeline on the same root and submits
warm's two steps again, which the step cache answers.
"""

from __future__ import annotations

import importlib.metadata
import pathlib
from typing import Any

from bench_ops import MakeMetrics, NoOpUnit

from stemma.core.front.pipeline import Pipeline

VERSIONS = {"stemma-core": importlib.metadata.version("stemma-core")}
UNITS_PER_WORKER = 500
"""At most this many units per worker job; fewer when N is small, so every worker gets work."""


class StemmaUnits:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n, self.root, self.workers = n, workdir / "stemma-root", workers
        self.pipeline: Any = None
        # (None, as ``stemma_defaults`` sets it: packs sized as they come back, the default)
        self.units_per_worker: int | None = max(1, min(UNITS_PER_WORKER, -(-n // (2 * workers))))

    def _step(self, pipeline: Any, tag: int) -> Any:
        # The N inputs are part of the job (Dask and Parsl make theirs in the timed part too): a
        # seed per tag, so warm makes N new inputs instead of the step cache answering cold's.
        made = pipeline.run(MakeMetrics, params={"count": self.n, "seed": tag})
        result = pipeline.run(
            NoOpUnit,
            params={"tag": tag},
            inputs={"items": made.output("metrics")},
            execution={"artifacts_per_unit": 1, "units_per_worker": self.units_per_worker},
        )
        assert result.success, result
        assert result.total_count == self.n, result
        return result

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


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> StemmaUnits:
    return StemmaUnits(n, workdir, workers)
