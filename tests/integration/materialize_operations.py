"""Operations that report where a worker found their inputs: importable by name in workers.

Each input becomes a metric saying where it was materialized (absolute, and relative to the
sandbox), what the file held and which process read it, and a ``copy`` output: the file's bytes
upper-cased (new bytes, so a new artifact) under the very name the worker found it by. Both are
named after the materialized file, so stem matching links each to its input.
"""

import os
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from stemma.core.operations import (
    ArtifactResult,
    DataDraft,
    ExecuteInput,
    InputSpec,
    MetricDraft,
    OperationDefinition,
    OutputSpec,
    PostprocessInput,
    PreprocessInput,
)

ROLE = "text"


class _ReportMaterialized(OperationDefinition):
    """What the worker was given for role ``text``: one ``seen`` metric and one ``copy`` each."""

    outputs: ClassVar = {
        "seen": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": [ROLE]}),
        "copy": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": [ROLE]}),
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        sandbox = inp.sandbox_dir.parent  # preprocess/ is one of the sandbox's folders
        seen: list[dict[str, Any]] = []
        for artifact, path in zip(
            inp.input_artifacts[ROLE], inp.materialized_paths[ROLE], strict=True
        ):
            inside = path.is_relative_to(sandbox)
            seen.append(
                {
                    "input": artifact.original_name,
                    "path": str(path),
                    "sandbox": str(sandbox),
                    "relative": path.relative_to(sandbox).as_posix() if inside else None,
                    "text": path.read_text(),
                    "pid": os.getpid(),
                }
            )
        return {"seen": seen}

    def execute(self, inp: ExecuteInput) -> Any:
        seen: list[dict[str, Any]] = inp.prepared["seen"]
        for report in seen:
            name = Path(report["path"]).name
            (inp.execute_dir / name).write_text(report["text"].upper())
        return seen

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        seen: list[dict[str, Any]] = inp.execute_result
        # Named without an extension: a metric input is materialized with ".json" added.
        reports = [
            MetricDraft.draft(report, f"{PurePosixPath(report['path']).stem}_seen")
            for report in seen
        ]
        copies = [DataDraft.draft(path.read_bytes(), path.name) for path in inp.files]
        return ArtifactResult(artifacts={"seen": reports, "copy": copies})


class SeeAsText(_ReportMaterialized):
    """Role ``text`` materialized with ``materialize_as=".txt"``."""

    name = "test.see_as_text"
    inputs: ClassVar = {ROLE: InputSpec(artifact_type="any", materialize_as=".txt")}


class SeeAsMade(_ReportMaterialized):
    """Role ``text`` materialized as each artifact's own name (no ``materialize_as``)."""

    name = "test.see_as_made"
    inputs: ClassVar = {ROLE: InputSpec(artifact_type="any")}
