"""Operations that say which heavy modules their worker had loaded: importable by name."""

from __future__ import annotations

import sys
from typing import Any, ClassVar

from pydantic import BaseModel

from stemma.core.operations import InputSpec, OperationDefinition, OutputSpec, PassthroughResult
from stemma.core.operations.drafts import MetricDraft
from stemma.core.operations.results import (
    ArtifactResult,
    ExecuteInput,
    PostprocessInput,
    PreprocessInput,
)

WATCHED = ("deltalake", "pyarrow", "stemma.storage.delta_store")


def loaded() -> dict[str, bool]:
    return {name: name in sys.modules for name in WATCHED}


class ModulesSeen(OperationDefinition):
    """One metric per ``count``: the watched modules loaded in the worker when it ran."""

    class Params(BaseModel):
        count: int = 2
        pad: int = 0
        """Characters of padding in each metric (0: none), to make large inputs."""

    name = "test.modules_seen"
    outputs: ClassVar = {
        "seen": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": []})
    }
    params: Params = Params()

    def execute(self, inp: ExecuteInput) -> Any:
        return loaded()

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        pad = {"pad": "x" * self.params.pad} if self.params.pad else {}
        drafts = [
            MetricDraft.draft(
                {"i": i, **inp.execute_result, **pad}, f"seen{i}.json", step_number=inp.step_number
            )
            for i in range(self.params.count)
        ]
        return ArtifactResult(artifacts={"seen": drafts})


class AncestryCurator(OperationDefinition):
    """Passes its inputs on, after asking its ``store`` a read beyond a worker store's own."""

    name = "test.ancestry_curator"
    inputs: ClassVar = {"items": InputSpec(artifact_type="metric")}
    outputs: ClassVar = {"items": OutputSpec(artifact_type="metric")}

    def execute_curator(self, inputs: Any, step_number: int, store: Any) -> PassthroughResult:
        ids: list[str] = list(inputs["items"]["artifact_id"])
        ancestry = store.ancestry(ids)  # the full store's read, opened on first use
        assert set(ancestry) == set(ids), ancestry
        return PassthroughResult(
            passthrough={"items": ids}, metadata={"after": loaded(), "ancestors": len(ancestry)}
        )


class DryModulesSeen(OperationDefinition):
    """One metric per unit of inputs it does not hydrate: the watched modules loaded, and what
    it was given of its inputs (their ids and sizes, without content)."""

    name = "test.dry_modules_seen"
    inputs: ClassVar = {"items": InputSpec(artifact_type="metric", hydrate=False)}
    outputs: ClassVar = {
        "seen": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": ["items"]})
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        items = inp.input_artifacts["items"]
        return {"given": [[a.artifact_id, a.content is None, a.size] for a in items]}

    def execute(self, inp: ExecuteInput) -> Any:
        return {**loaded(), **inp.prepared}

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        name = f"dry_{inp.execute_result['given'][0][0][:8]}.json"
        return ArtifactResult(artifacts={"seen": [MetricDraft.draft(inp.execute_result, name)]})


class HydratedModulesSeen(DryModulesSeen):
    """:class:`DryModulesSeen` over inputs it hydrates: what it was given is their content."""

    name = "test.hydrated_modules_seen"
    inputs: ClassVar = {"items": InputSpec(artifact_type="metric")}

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        items = inp.input_artifacts["items"]
        return {"given": [[a.artifact_id, (a.content or b"").decode(), a.size] for a in items]}


class HydratedDataModulesSeen(DryModulesSeen):
    """:class:`DryModulesSeen` over data inputs it hydrates: their sizes and last bytes."""

    name = "test.hydrated_data_modules_seen"
    inputs: ClassVar = {"items": InputSpec(artifact_type="data")}

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        items = inp.input_artifacts["items"]
        return {
            "given": [
                [a.artifact_id, len(a.content or b""), (a.content or b"")[-8:].hex()] for a in items
            ]
        }
