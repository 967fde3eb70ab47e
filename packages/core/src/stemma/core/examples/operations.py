"""Small operations the tests, docs and demo use: generate, transform, score, wait, merge.

They are real operations (registered by name, run through the whole lifecycle), kept tiny so
a reader can see everything an operation has to declare. Data artifacts are CSV files with
columns ``x`` and ``y``.
"""

from __future__ import annotations

import csv
import io
import random
import statistics
import time
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.drafts import DataDraft, MetricDraft
from stemma.core.operations.pairing import GroupBy
from stemma.core.operations.results import (
    ArtifactResult,
    ExecuteInput,
    PassthroughResult,
    PostprocessInput,
    PreprocessInput,
)
from stemma.core.operations.specs import InputSpec, OutputSpec


def _read_xy(path: Path) -> list[tuple[float, float]]:
    with path.open(newline="") as stream:
        return [(float(row["x"]), float(row["y"])) for row in csv.DictReader(stream)]


def _write_xy(path: Path, rows: list[tuple[float, float]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["x", "y"])
    writer.writerows(rows)
    path.write_text(buffer.getvalue())


def _data_drafts(inp: PostprocessInput, suffix: str = ".csv") -> list[DataDraft]:
    return [
        DataDraft.draft(path.read_bytes(), path.name, step_number=inp.step_number)
        for path in inp.files
        if path.suffix == suffix
    ]


class DataGenerator(OperationDefinition):
    """Write ``count`` CSV datasets of ``rows`` random (x, y) points each, from a seed."""

    class Params(BaseModel):
        count: int = 3
        rows: int = 10
        seed: int = 0
        prefix: str = "dataset"

    name = "example.generate"
    outputs: ClassVar = {
        "datasets": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": []})
    }
    params: Params = Params()

    def execute(self, inp: ExecuteInput) -> Any:
        for index in range(self.params.count):
            rng = random.Random(self.params.seed * 1000 + index)
            rows = [
                (round(rng.uniform(0, 10), 3), round(rng.uniform(0, 10), 3))
                for _ in range(self.params.rows)
            ]
            _write_xy(inp.execute_dir / f"{self.params.prefix}_{index}.csv", rows)
        return self.params.count

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        return ArtifactResult(artifacts={"datasets": _data_drafts(inp)})


class Transform(OperationDefinition):
    """Scale every y by ``scale``; one output per input, named after it (lineage by stem)."""

    class Params(BaseModel):
        scale: float = 1.0

    name = "example.transform"
    inputs: ClassVar = {"dataset": InputSpec(artifact_type="data")}
    outputs: ClassVar = {
        "dataset": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["dataset"]})
    }
    params: Params = Params()

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {"paths": list(inp.materialized_paths["dataset"])}

    suffix: ClassVar[str] = "scaled"
    """Outputs are named ``{input stem}_{suffix}.csv``."""

    def execute(self, inp: ExecuteInput) -> Any:
        for path in inp.prepared["paths"]:
            self.before_each()
            rows = [(x, round(y * self.params.scale, 6)) for x, y in _read_xy(path)]
            _write_xy(inp.execute_dir / f"{path.stem}_{self.suffix}.csv", rows)

    def before_each(self) -> None:
        """Called before each dataset is scaled: nothing here (``SlowScale`` waits)."""

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        return ArtifactResult(artifacts={"dataset": _data_drafts(inp)})


class _Combine(OperationDefinition):
    """Add the y of a ``left`` and a ``right`` dataset point by point; abstract (no name)."""

    name = None
    inputs: ClassVar = {
        "left": InputSpec(artifact_type="data"),
        "right": InputSpec(artifact_type="data"),
    }
    outputs: ClassVar = {
        "combined": OutputSpec(
            artifact_type="data", infer_lineage_from={"inputs": ["left", "right"]}
        )
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {
            "left": list(inp.materialized_paths["left"]),
            "right": list(inp.materialized_paths["right"]),
        }

    def execute(self, inp: ExecuteInput) -> Any:
        for left in inp.prepared["left"]:
            for right in inp.prepared["right"]:
                rows = [
                    (x, y1 + y2)
                    for (x, y1), (_, y2) in zip(_read_xy(left), _read_xy(right), strict=False)
                ]
                _write_xy(inp.execute_dir / f"{left.stem}__{right.stem}.csv", rows)

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        return ArtifactResult(artifacts={"combined": _data_drafts(inp)})


class Combine(_Combine):
    """Combine datasets pairwise, first with first (ZIP)."""

    name = "example.combine"
    group_by = GroupBy.ZIP


class CombineAll(_Combine):
    """Combine every left dataset with every right one (CROSS_PRODUCT)."""

    name = "example.combine_all"
    group_by = GroupBy.CROSS_PRODUCT


class MetricCalculator(OperationDefinition):
    """The mean and spread of y of each dataset, as a metric named after it."""

    name = "example.metrics"
    inputs: ClassVar = {"dataset": InputSpec(artifact_type="data")}
    outputs: ClassVar = {
        "metrics": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": ["dataset"]})
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {"paths": list(inp.materialized_paths["dataset"])}

    def execute(self, inp: ExecuteInput) -> Any:
        return {
            path.stem: {
                "mean_y": round(statistics.fmean(y for _, y in _read_xy(path)), 6),
                "max_y": max(y for _, y in _read_xy(path)),
            }
            for path in inp.prepared["paths"]
        }

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        scores: dict[str, dict[str, float]] = inp.execute_result
        drafts = [
            MetricDraft.draft(values, f"{stem}_metrics.json", step_number=inp.step_number)
            for stem, values in sorted(scores.items())
        ]
        return ArtifactResult(artifacts={"metrics": drafts})


class Wait(OperationDefinition):
    """Sleep ``seconds`` per unit, then pass its inputs through: for cancellation tests."""

    class Params(BaseModel):
        seconds: float = 1.0

    name = "example.wait"
    inputs: ClassVar = {"dataset": InputSpec(artifact_type="any")}
    outputs: ClassVar = {"dataset": OutputSpec(artifact_type="any")}
    params: Params = Params()

    def execute_curator(self, inputs: Any, step_number: int, store: Any) -> PassthroughResult:
        time.sleep(self.params.seconds)
        return PassthroughResult(passthrough={"dataset": list(inputs["dataset"]["artifact_id"])})


class CopyUnlessRefused(OperationDefinition):
    """Copy each dataset unless ``refusal`` says why not: subclass it to make a faulty step.

    The base of the failing examples; tests subclass it for their own faults.
    """

    name = None
    inputs: ClassVar = {"dataset": InputSpec(artifact_type="data")}
    outputs: ClassVar = {
        "dataset": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["dataset"]})
    }

    def refusal(self, path: Path) -> str | None:
        """Why ``path`` must fail, or None to copy it."""
        raise NotImplementedError

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {"paths": list(inp.materialized_paths["dataset"])}

    def execute(self, inp: ExecuteInput) -> Any:
        for path in inp.prepared["paths"]:
            if (reason := self.refusal(path)) is not None:
                raise ValueError(reason)
            (inp.execute_dir / path.name).write_bytes(path.read_bytes())

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        return ArtifactResult(artifacts={"dataset": _data_drafts(inp)})


class FailWhileMarked(CopyUnlessRefused):
    """Fail on ``match`` while the file ``marker`` exists: a flaky step.

    Same params, same key, different outcome: what a transient fault looks like to the caches.
    """

    class Params(BaseModel):
        marker: str
        match: str = ""

    name = "example.fail_while_marked"
    params: Params

    def refusal(self, path: Path) -> str | None:
        if self.params.match in path.name and Path(self.params.marker).exists():
            return f"transient fault on {path.name}"
        return None


class Fail(CopyUnlessRefused):
    """Fail on every input whose name contains ``match`` (all of them by default)."""

    class Params(BaseModel):
        match: str = ""

    name = "example.fail"
    params: Params = Params()

    def refusal(self, path: Path) -> str | None:
        return f"refusing {path.name}" if self.params.match in path.name else None


class SlowCopy(CopyUnlessRefused):
    """Copy each dataset after sleeping ``seconds``: a creator whose units take a while.

    Cancellation tests and demos use it: each unit is its own worker task, so some finish, some
    run, and some wait in the queue when a cancel lands.
    """

    class Params(BaseModel):
        seconds: float = 1.0

    name = "example.slow_copy"
    params: Params = Params()

    def refusal(self, path: Path) -> str | None:
        time.sleep(self.params.seconds)
        return None


class SlowScale(Transform):
    """Scale every y by ``scale`` after sleeping ``seconds`` per dataset: slow, and real work.

    The watchable demo's slow step. Its outputs differ from its inputs, so they are artifacts of
    their own with lineage of their own; a slow *copy* outputs its inputs' very bytes, which are
    the same artifacts as its inputs.
    """

    class Params(Transform.Params):
        scale: float = 2.0
        seconds: float = 1.0

    name = "example.slow_scale"
    params: Params = Params()  # pyright: ignore[reportIncompatibleVariableOverride]
    suffix: ClassVar[str] = "slow"

    def before_each(self) -> None:
        time.sleep(self.params.seconds)
