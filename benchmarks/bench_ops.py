"""Cheap operations for the Pipeline benchmarks, importable by name in spawned workers.

``bench_dispatch`` and ``bench_cached_rerun`` put ``benchmarks/`` on ``sys.path`` before they
create a Pipeline; spawned workers inherit ``sys.path`` and unpickle these classes by reference.
"""

from __future__ import annotations

import json
import random
from typing import Any, ClassVar

from pydantic import BaseModel

from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.drafts import DataDraft, MetricDraft
from stemma.core.operations.results import (
    ArtifactResult,
    ExecuteInput,
    PassthroughResult,
    PostprocessInput,
    PreprocessInput,
)
from stemma.core.operations.specs import InputSpec, OutputSpec


class MakeMetrics(OperationDefinition):
    """One unit that creates ``count`` tiny metric artifacts (no files, no tool)."""

    class Params(BaseModel):
        count: int = 1_000
        seed: int = 0

    name = "bench.make_metrics"
    outputs: ClassVar = {
        "metrics": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": []})
    }
    params: Params = Params()

    def execute(self, inp: ExecuteInput) -> Any:
        return self.params.count

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        seed = self.params.seed
        drafts = [
            MetricDraft.draft({"i": i, "seed": seed}, f"m{i}.json", step_number=inp.step_number)
            for i in range(self.params.count)
        ]
        return ArtifactResult(artifacts={"metrics": drafts})


class NoOp(OperationDefinition):
    """A curator that passes its inputs through: the cheapest unit there is."""

    class Params(BaseModel):
        tag: int = 0
        """Only to give otherwise identical steps different fingerprints."""

    name = "bench.noop"
    inputs: ClassVar = {"items": InputSpec(artifact_type="any")}
    outputs: ClassVar = {"items": OutputSpec(artifact_type="any")}
    params: Params = Params()

    def execute_curator(self, inputs: Any, step_number: int, store: Any) -> PassthroughResult:
        return PassthroughResult(passthrough={"items": list(inputs["items"]["artifact_id"])})


class NoOpUnit(OperationDefinition):
    """A creator that does nothing per unit: dispatch overhead with the lifecycle's minimum."""

    class Params(BaseModel):
        tag: int = 0
        """Only to give otherwise identical steps different fingerprints."""

    name = "bench.noop_unit"
    inputs: ClassVar = {"items": InputSpec(artifact_type="any", hydrate=False)}
    params: Params = Params()

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {}

    def execute(self, inp: ExecuteInput) -> Any:
        return None


class MetricsPerItem(OperationDefinition):
    """A creator making ``count`` tiny metric artifacts per unit: a step's commit at scale."""

    class Params(BaseModel):
        count: int = 100

    name = "bench.metrics_per_item"
    inputs: ClassVar = {"items": InputSpec(artifact_type="any", hydrate=False)}
    outputs: ClassVar = {
        "metrics": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": []})
    }
    params: Params = Params()

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        (item,) = inp.input_artifacts["items"]
        return {"item": item.artifact_id}

    def execute(self, inp: ExecuteInput) -> Any:
        return inp.prepared["item"]

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        item = str(inp.execute_result)
        drafts = [
            MetricDraft.draft(
                {"item": item, "i": i}, f"{item}_{i}.json", step_number=inp.step_number
            )
            for i in range(self.params.count)
        ]
        return ArtifactResult(artifacts={"metrics": drafts})


class ReadsInput(OperationDefinition):
    """A creator that reads its one input's content and makes one metric from it, with lineage.

    The usual unit (issue 34): its input is hydrated (read from the store with its content),
    ``json.loads`` of it is the value, and the value's successor is one small metric named after
    the input, so stem matching records the input as its parent.
    """

    class Params(BaseModel):
        tag: int = 0
        """Only to give otherwise identical steps different fingerprints."""

    name = "bench.reads_input"
    inputs: ClassVar = {"items": InputSpec(artifact_type="metric")}
    outputs: ClassVar = {
        "results": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": ["items"]})
    }
    params: Params = Params()

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        (item,) = inp.input_artifacts["items"]
        return {"value": json.loads(item.content or b"null"), "name": item.original_name}

    def execute(self, inp: ExecuteInput) -> Any:
        return inp.prepared

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        got = inp.execute_result
        value = {"i": got["value"]["i"] + 1, "tag": self.params.tag}
        draft = MetricDraft.draft(value, got["name"], step_number=inp.step_number)
        return ArtifactResult(artifacts={"results": [draft]})


class DryMakesOne(ReadsInput):
    """:class:`ReadsInput` without reading its input (``hydrate=False``): the dry unit beside it."""

    name = "bench.dry_makes_one"
    inputs: ClassVar = {"items": InputSpec(artifact_type="metric", hydrate=False)}

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        (item,) = inp.input_artifacts["items"]
        return {"value": {"i": 0}, "name": item.original_name}


def random_csv(rng: random.Random, size: int) -> bytes:
    """About ``size`` bytes of CSV (a data artifact is a table): two columns of random hex.

    Hex digits compress about 2:1, as a table of measurements does; nothing flatters the read.
    """
    lines = max(1, size // 82)
    text = rng.randbytes(lines * 40).hex()
    rows = (f"{text[i : i + 40]},{text[i + 40 : i + 80]}" for i in range(0, lines * 80, 80))
    return ("a,b\n" + "\n".join(rows) + "\n").encode()


class MakeData(OperationDefinition):
    """One unit that makes ``count`` data artifacts (CSV) of about ``size`` bytes each."""

    class Params(BaseModel):
        count: int = 1
        size: int = 1 << 20
        seed: int = 0

    name = "bench.make_data"
    outputs: ClassVar = {
        "data": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": []})
    }
    params: Params = Params()

    def execute(self, inp: ExecuteInput) -> Any:
        return self.params.count

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        rng = random.Random(self.params.seed)
        drafts = [
            DataDraft.draft(
                random_csv(rng, self.params.size), f"d{i}.csv", step_number=inp.step_number
            )
            for i in range(self.params.count)
        ]
        return ArtifactResult(artifacts={"data": drafts})


class ReadsData(OperationDefinition):
    """A creator that reads its one data input's content and makes one small metric from it."""

    class Params(BaseModel):
        tag: int = 0

    name = "bench.reads_data"
    inputs: ClassVar = {"data": InputSpec(artifact_type="data")}
    outputs: ClassVar = {
        "sizes": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": ["data"]})
    }
    params: Params = Params()

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        (item,) = inp.input_artifacts["data"]
        content = item.content or b""
        return {"size": len(content), "last": content[-1:].hex(), "name": item.original_name}

    def execute(self, inp: ExecuteInput) -> Any:
        return inp.prepared

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        got = inp.execute_result
        value = {"size": got["size"], "last": got["last"], "tag": self.params.tag}
        draft = MetricDraft.draft(value, got["name"], step_number=inp.step_number)
        return ArtifactResult(artifacts={"sizes": [draft]})


class DryData(ReadsData):
    """:class:`ReadsData` without reading its input (``hydrate=False``): the unit beside it."""

    name = "bench.dry_data"
    inputs: ClassVar = {"data": InputSpec(artifact_type="data", hydrate=False)}

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        (item,) = inp.input_artifacts["data"]
        return {"size": item.size, "last": "", "name": item.original_name}
