"""Operations that report what their InputSpecs gave them: importable by name in workers."""

import json
from typing import Any, ClassVar

from stemma.core.operations import InputSpec, OperationDefinition, OutputSpec
from stemma.core.operations.drafts import MetricDraft
from stemma.core.operations.results import (
    ArtifactResult,
    ExecuteInput,
    PassthroughResult,
    PostprocessInput,
    PreprocessInput,
)


class ReportInputs(OperationDefinition):
    """One metric per dataset saying what preprocess saw of it (content? files? metrics?)."""

    name = "test.report_inputs"
    inputs: ClassVar = {
        "dataset": InputSpec(artifact_type="data", hydrate=False, with_associated=("metric",))
    }
    outputs: ClassVar = {
        "report": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": ["dataset"]})
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        associated = inp.associated.get("dataset", {})
        return {
            a.original_name: {
                "has_content": a.content is not None,
                "files": len(inp.materialized_paths["dataset"]),
                "metrics": [
                    json.loads(m.content or b"{}")
                    for m in associated.get(a.artifact_id, {}).get("metric", [])
                ],
            }
            for a in inp.input_artifacts["dataset"]
        }

    def execute(self, inp: ExecuteInput) -> Any:
        return dict(inp.prepared)

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        seen: dict[str, Any] = inp.execute_result
        drafts = [
            MetricDraft.draft(report, f"{name.rsplit('.', 1)[0]}_report.json")
            for name, report in sorted(seen.items())
        ]
        return ArtifactResult(artifacts={"report": drafts})


class KeepScored(OperationDefinition):
    """A curator passing on the datasets that have at least one metric derived from them."""

    name = "test.keep_scored"
    inputs: ClassVar = {"dataset": InputSpec(artifact_type="data", with_associated=("metric",))}
    outputs: ClassVar = {"dataset": OutputSpec(artifact_type="data")}

    def execute_curator(self, inputs: Any, step_number: int, store: Any) -> PassthroughResult:
        frame = inputs["dataset"]
        kept = frame.filter(frame["associated_metric"].list.len() > 0)
        return PassthroughResult(passthrough={"dataset": kept["artifact_id"].to_list()})


class Grade(OperationDefinition):
    """One metric per anchor ``dataset``, naming what anchor matching paired with it.

    Each dataset is matched on its own against ``metrics`` and ``source`` by shared ancestry
    (``anchor_role``); a dataset with no match in either role is left out.
    """

    name = "test.grade"
    anchor_role = "dataset"
    inputs: ClassVar = {
        "dataset": InputSpec(artifact_type="data", hydrate=False),
        "metrics": InputSpec(artifact_type="metric", hydrate=False),
        "source": InputSpec(artifact_type="data", hydrate=False),
    }
    outputs: ClassVar = {
        "grade": OutputSpec(
            artifact_type="metric", infer_lineage_from={"inputs": ["dataset", "metrics", "source"]}
        )
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        (dataset,) = inp.input_artifacts["dataset"]
        paired = {
            role: [a.artifact_id for a in artifacts]
            for role, artifacts in inp.input_artifacts.items()
        }
        return {"paired": paired, "stem": dataset.original_name.rsplit(".", 1)[0]}

    def execute(self, inp: ExecuteInput) -> Any:
        return inp.prepared

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        made: dict[str, Any] = inp.execute_result
        draft = MetricDraft.draft(made["paired"], f"{made['stem']}_grade.json")
        return ArtifactResult(artifacts={"grade": [draft]})
