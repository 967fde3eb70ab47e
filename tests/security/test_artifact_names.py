"""Artifact names become the file names of a step's inputs: plain names, or refused.

An operation names what it makes (``original_name``); a later step gets it as a file of that
name under ``materialized_inputs/{role}/``.
"""

import dataclasses
import os
import pathlib
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stemma.core.engine.worker.materialize import materialize_inputs
from stemma.core.errors import ArtifactTypeError
from stemma.core.operations import (
    ArtifactResult,
    InputSpec,
    MetricDraft,
    OperationDefinition,
    OutputSpec,
    PostprocessInput,
    PreprocessInput,
)

_NASTY = [
    "../../escape.json",
    "..",
    "/etc/passwd",
    "a\x00b.json",
    "a\nb.json",
    "-rf",
    "x" * 300 + ".json",
    "é" * 120,
    b"caf\xe9.json".decode("utf-8", "surrogateescape"),
    "dir\\file",
    "",
]
_names = st.one_of(st.sampled_from(_NASTY), st.text(max_size=30))


class ReadsMetrics(OperationDefinition):
    name = "security.reads_metrics"
    inputs: ClassVar = {"metrics": InputSpec(artifact_type="metric")}
    outputs: ClassVar = {
        "metrics": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": ["metrics"]})
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {"paths": inp.materialized_paths["metrics"]}

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        return ArtifactResult(artifacts={})

    def execute(self, inp: Any) -> Any:
        return None


@settings(max_examples=200, deadline=None)
@given(name=_names)
def test_artifact_name_is_refused_naming_the_field_or_is_one_plain_file_name(name: str) -> None:
    draft: MetricDraft | None = None
    refused = ""
    try:
        draft = MetricDraft.draft({"a": 1}, name)
    except ArtifactTypeError as error:
        refused = str(error)
    if draft is None:
        assert "original_name" in refused
        assert "\n" not in refused
        return
    folder = pathlib.Path("/sandbox/materialized_inputs/metrics")
    placed = pathlib.Path(os.path.normpath(folder / draft.original_name))
    assert placed.parent == folder
    assert all(ch not in draft.original_name for ch in "\x00\n\r")
    assert len(f"{draft.original_name}_12345678".encode()) <= 255


@pytest.mark.parametrize(
    "stored", ["../../escape.json", "{tmp}/abs.json", "a\x00b.json", "x" * 300]
)
def test_input_whose_stored_name_is_no_file_name_is_written_inside_its_roles_folder(
    tmp_path: pathlib.Path, stored: str
) -> None:
    # A name from the tables (an older stemma, another writer of a shared root) is not trusted.
    made = MetricDraft.draft({"a": 1}, "fine.json").finalize()
    # (an absolute name points into tmp_path, so even without the guard nothing lands elsewhere)
    artifact = dataclasses.replace(made, original_name=stored.format(tmp=tmp_path))
    target = tmp_path / "sandbox" / "materialized_inputs"
    paths = materialize_inputs(
        ReadsMetrics(), {"metrics": [artifact]}, target, root=tmp_path, load=lambda _: {}
    )
    (written,) = paths["metrics"]
    assert written.parent == target / "metrics"
    assert written.name == f"{made.artifact_id}.json"
    assert written.is_file()
    assert {p.name for p in tmp_path.rglob("*") if p.is_file()} == {written.name}
