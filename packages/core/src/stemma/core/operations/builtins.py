"""The built-in operations: ingest files, merge streams, filter by metrics.

``IngestData`` and ``IngestFiles`` bring files in, ``Merge`` combines streams and ``Filter``
keeps the artifacts whose metrics pass.

Ingestion is keyed by content (docs/concepts/identity-and-keys.md): building the step reads
every named file and records its content hash in the ``files`` param, which is what the keys
hash; the ``paths`` themselves are left out of the keys wherever the artifacts do not depend on
them. Editing a file in place is a miss; moving an ingested CSV is not. ``Merge`` and ``Filter``
pass existing artifacts through and create none.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from stemma.core.graph.input_files import input_file_key
from stemma.core.identity import content_id
from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.drafts import DataDraft, FileRefDraft, FinalizedArtifact
from stemma.core.operations.results import (
    ArtifactResult,
    ExecuteInput,
    PassthroughResult,
    PostprocessInput,
)
from stemma.core.operations.specs import InputSpec, OutputSpec

if TYPE_CHECKING:
    import polars as pl

    from stemma.core.store.protocols import WorkerStore

# ---------------------------------------------------------------------------- ingestion


class IngestedFile(BaseModel, frozen=True, extra="forbid"):
    """What the keys of an ingestion step hold for one file: its name and content."""

    name: str
    """The file name: the artifact's ``original_name``."""
    content_hash: str
    """xxh3_128 of the bytes (of the sorted tree listing, for a directory)."""
    size: int
    """Bytes (of every regular file, for a directory)."""
    path: str | None = None
    """The absolute path, only where the artifact's id depends on it (file refs)."""


class _IngestParams(BaseModel, frozen=True, extra="forbid"):
    """``paths`` as given; ``files`` computed from them when the step is built."""

    directories: ClassVar[bool] = False
    """Whether a path may name a directory."""
    keyed_by_path: ClassVar[bool] = False
    """Whether the artifacts' ids (and so the keys) depend on where the files are."""

    paths: list[str] = Field(min_length=1, exclude=True)
    """The files to ingest; made absolute when validated. Not in the keys: ``files`` is."""
    files: tuple[IngestedFile, ...] = Field(default=(), validate_default=True)
    """Computed from ``paths`` (leave it unset): the names and content hashes the keys hold."""

    @field_validator("paths")
    @classmethod
    def _existing(cls, paths: list[str]) -> list[str]:
        resolved = [os.path.abspath(os.path.expanduser(path)) for path in paths]
        for given, path in zip(paths, resolved, strict=True):
            kind = "file or directory" if cls.directories else "file"
            if not os.path.exists(path):
                raise ValueError(f"input {kind} {given!r} does not exist (resolved to {path})")
            if not cls.directories and not os.path.isfile(path):
                raise ValueError(f"{given!r} is not a regular file; give CSV files")
        if repeated := sorted({p for p in resolved if resolved.count(p) > 1}):
            raise ValueError(f"paths name the same file more than once: {repeated}")
        if not cls.keyed_by_path:
            names = [os.path.basename(path) for path in resolved]
            if clashes := sorted({n for n in names if names.count(n) > 1}):
                raise ValueError(
                    f"file names must be unique (they name the artifacts), repeated: {clashes}"
                )
        return resolved

    @field_validator("files")
    @classmethod
    def _digests(
        cls, given: tuple[IngestedFile, ...], info: ValidationInfo
    ) -> tuple[IngestedFile, ...]:
        paths: list[str] | None = info.data.get("paths")
        if paths is None:  # paths were invalid: that error is the one to report
            return given
        computed = tuple(cls.digest(path) for path in paths)
        if given and given != computed:
            raise ValueError(
                "files is computed from paths and does not match the files on disk; leave it unset"
            )
        return computed

    @classmethod
    def digest(cls, path: str) -> IngestedFile:
        """The key entry of one (absolute) path, from its current content."""
        key = input_file_key(Path(path), f"{cls.__qualname__}.paths")
        return IngestedFile(
            name=os.path.basename(path),
            content_hash=str(key["content_hash"]),
            size=int(str(key["size"])),
            path=path if cls.keyed_by_path else None,
        )


def _changed(path: str) -> str:
    return (
        f"{path} changed after the step was built (its content hash no longer matches the key); "
        "run the step again"
    )


class IngestData(OperationDefinition):
    """Read CSV files into data artifacts, one per file, named after it."""

    class Params(_IngestParams, frozen=True):
        """The CSV files to ingest."""

    name = "ingest_data"
    description = "Read CSV files into data artifacts (keyed by content)"
    outputs: ClassVar = {
        "data": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": []})
    }
    params: Params

    def execute(self, inp: ExecuteInput) -> Any:
        """Copy each file into the sandbox, refusing one edited since the step was keyed."""
        for path, recorded in zip(self.params.paths, self.params.files, strict=True):
            content = Path(path).read_bytes()
            if content_id(content) != recorded.content_hash:
                raise ValueError(_changed(path))
            (inp.execute_dir / recorded.name).write_bytes(content)
        return len(self.params.paths)

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        """One data draft per copied file."""
        drafts = [
            DataDraft.draft(path.read_bytes(), path.name, step_number=inp.step_number)
            for path in inp.files
        ]
        return ArtifactResult(artifacts={"data": drafts})


class IngestFiles(OperationDefinition):
    """Record files or directories where they are, as file-ref artifacts (nothing is copied)."""

    class Params(_IngestParams, frozen=True):
        """The files or directories to reference."""

        directories: ClassVar[bool] = True
        keyed_by_path: ClassVar[bool] = True

    name = "ingest_files"
    description = "Reference files or directories in place as file-ref artifacts"
    outputs: ClassVar = {
        "files": OutputSpec(artifact_type="file_ref", infer_lineage_from={"inputs": []})
    }
    params: Params

    def execute(self, inp: ExecuteInput) -> Any:
        """Check that nothing changed since the step was keyed; the files stay where they are."""
        for path, recorded in zip(self.params.paths, self.params.files, strict=True):
            if IngestFiles.Params.digest(path) != recorded:
                raise ValueError(_changed(path))
        return list(self.params.paths)

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        """One file-ref draft per path, recorded by its absolute path."""
        paths: list[str] = inp.execute_result
        drafts = [FileRefDraft.draft(Path(path), step_number=inp.step_number) for path in paths]
        return ArtifactResult(artifacts={"files": drafts})


# ---------------------------------------------------------------------------- curators


class Merge(OperationDefinition):
    """Pass every artifact of every input stream on as one stream, ``merged``.

    Give it a list of references (``pipeline.run(Merge, [a.output("x"), b.output("y")])``);
    they become roles ``input_0``, ``input_1``, …. No artifact is created or copied.
    """

    name = "merge"
    description = "Merge several streams into one (passthrough)"
    runtime_defined_inputs = True
    outputs: ClassVar = {"merged": OutputSpec(artifact_type="any")}

    def execute_curator(
        self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
    ) -> PassthroughResult:
        """Every input id, once, in role order."""
        merged: dict[str, None] = {}
        for role in sorted(inputs):
            merged.update(dict.fromkeys(inputs[role].get_column("artifact_id").to_list()))
        return PassthroughResult(
            passthrough={"merged": list(merged)},
            metadata={"by_role": {role: inputs[role].height for role in sorted(inputs)}},
        )


class Operator(StrEnum):
    """How a criterion compares a metric value with its threshold."""

    GT = "gt"
    GE = "ge"
    LT = "lt"
    LE = "le"
    EQ = "eq"
    NE = "ne"


_COMPARE: dict[Operator, Callable[[Any, Any], bool]] = {
    Operator.GT: operator.gt,
    Operator.GE: operator.ge,
    Operator.LT: operator.lt,
    Operator.LE: operator.le,
    Operator.EQ: operator.eq,
    Operator.NE: operator.ne,
}
_ORDERING = frozenset({Operator.GT, Operator.GE, Operator.LT, Operator.LE})


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Criterion(BaseModel, frozen=True, extra="forbid"):
    """One condition: ``metric`` compared with ``value`` by ``operator``."""

    metric: str = Field(min_length=1)
    """A key of the metric artifacts (``"mean_y"``)."""
    operator: Operator
    """One of gt, ge, lt, le, eq, ne."""
    value: bool | int | float | str
    """The threshold; a number for gt, ge, lt, le."""

    @model_validator(mode="after")
    def _comparable(self) -> Self:
        if self.operator in _ORDERING and not _is_number(self.value):
            raise ValueError(
                f"operator {self.operator.value!r} compares numbers; value {self.value!r} is not "
                "one (eq and ne take any scalar)"
            )
        return self

    def holds(self, observed: object) -> bool:
        """Whether an observed metric value satisfies the criterion (a mismatched type: no)."""
        if self.operator in _ORDERING:
            return _is_number(observed) and _COMPARE[self.operator](observed, self.value)
        return _COMPARE[self.operator](observed, self.value)


class Filter(OperationDefinition):
    """Keep the input artifacts whose metrics pass every criterion; create nothing.

    The metrics of an artifact are the metric artifacts derived from it, found by walking its
    lineage forward (an input that is itself a metric counts too). An artifact is kept when, for
    every criterion, some of its metrics has the criterion's key with a value that passes.

    Give the metric step's output as the optional ``metrics`` role: the Filter then waits for
    that step, considers only those metrics, and its keys change when the metrics are
    recomputed. Without it, metrics are looked up in the store when the step runs, and a rerun
    after recomputing them needs ``skip_cache=True``.
    """

    class Params(BaseModel, frozen=True, extra="forbid"):
        """The conditions an artifact must meet."""

        criteria: list[Criterion] = Field(min_length=1)
        """``[{metric, operator, value}]``, all of which must hold."""

    name = "filter"
    description = "Keep artifacts whose derived metrics pass every criterion (passthrough)"
    inputs: ClassVar = {
        "dataset": InputSpec(artifact_type="any", hydrate=False),
        "metrics": InputSpec(artifact_type="metric", required=False, hydrate=False),
    }
    outputs: ClassVar = {"dataset": OutputSpec(artifact_type="any")}
    params: Params

    def execute_curator(
        self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
    ) -> PassthroughResult:
        """Look up each input's metrics in the store and keep those that pass."""
        frame = inputs["dataset"]
        ids: list[str] = frame.get_column("artifact_id").to_list()
        types: list[str] = frame.get_column("artifact_type").to_list()
        queries: WorkerStore = store
        derived = queries.descendants(ids, artifact_type="metric")
        given = inputs.get("metrics")
        if given is not None:  # only the metrics this step was given (and so is keyed by)
            allowed = set(given.get_column("artifact_id").to_list())
            derived = {i: found & allowed for i, found in derived.items()}
        metrics_of: dict[str, set[str]] = {i: set(derived.get(i, ())) for i in ids}
        for artifact_id, kind in zip(ids, types, strict=True):
            if kind == "metric":  # a metric input is scored by itself
                metrics_of[artifact_id].add(artifact_id)
        wanted = {m for found in metrics_of.values() for m in found}
        values = _metric_values(queries.load_artifacts(wanted))
        kept = [i for i in ids if self._passes([values[m] for m in metrics_of[i] if m in values])]
        return PassthroughResult(
            passthrough={"dataset": kept},
            metadata={"kept": len(kept), "dropped": len(ids) - len(kept)},
        )

    def _passes(self, metrics: Sequence[Mapping[str, Any]]) -> bool:
        return all(
            any(c.metric in m and c.holds(m[c.metric]) for m in metrics)
            for c in self.params.criteria
        )


def _metric_values(loaded: Mapping[str, FinalizedArtifact]) -> dict[str, dict[str, Any]]:
    """The JSON object of each metric artifact (anything else is skipped)."""
    found: dict[str, dict[str, Any]] = {}
    for artifact_id, artifact in loaded.items():
        if artifact.artifact_type != "metric" or artifact.content is None:
            continue
        decoded = json.loads(artifact.content)
        if isinstance(decoded, dict):
            found[artifact_id] = decoded
    return found
