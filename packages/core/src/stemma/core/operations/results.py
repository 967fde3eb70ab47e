"""What crosses a lifecycle boundary: what each creator phase gets, and what comes back.

Creators' ``postprocess`` returns an :class:`ArtifactResult`; curators return either that or a
:class:`PassthroughResult`. The framework checks a result against the operation's declared
outputs with :func:`validate_result` before anything is finalized or staged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.errors import ResultValidationError
from stemma.core.operations.drafts import ArtifactDraft, FinalizedArtifact

if TYPE_CHECKING:
    from stemma.core.operations.definition import OperationDefinition

_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True, kw_only=True)
class PreprocessInput:
    """What ``preprocess`` gets: the sandbox and the inputs."""

    sandbox_dir: Path
    """The ``preprocess/`` directory of this execution's sandbox."""
    input_artifacts: Mapping[str, list[FinalizedArtifact]]
    """``{role: [artifacts]}`` of this execution."""
    materialized_paths: Mapping[str, list[Path]]
    """``{role: [paths]}`` of the inputs written under ``materialized_inputs/``."""
    associated: Mapping[str, Mapping[str, Mapping[str, list[FinalizedArtifact]]]] = field(
        default_factory=dict[str, Mapping[str, Mapping[str, list[FinalizedArtifact]]]]
    )
    """``{role: {input id: {type: [artifacts]}}}`` for roles declaring ``with_associated``."""


@dataclass(frozen=True, kw_only=True)
class ExecuteInput:
    """What ``execute`` gets: where to write, and what ``preprocess`` prepared."""

    execute_dir: Path
    """The ``execute/`` directory: write outputs here."""
    log_path: Path
    """``tool_output.log``: send a tool's stdout and stderr here."""
    prepared: Mapping[str, Any]
    """What ``preprocess`` returned."""


@dataclass(frozen=True, kw_only=True)
class PostprocessInput:
    """What ``postprocess`` gets: the files ``execute`` left and what it returned."""

    execute_dir: Path
    """The ``execute/`` directory."""
    files: list[Path]
    """Every regular file under ``execute_dir``, sorted."""
    execute_result: Any
    """What ``execute`` returned."""
    step_number: int
    """The step's number, for drafts."""


@dataclass(frozen=True, kw_only=True)
class ArtifactResult:
    """New artifacts made by one execution, by output role."""

    success: bool = True
    """False when the execution failed; ``error`` then says why."""
    error: str | None = None
    """What went wrong; required when ``success`` is False."""
    artifacts: Mapping[str, Sequence[ArtifactDraft]] = field(
        default_factory=dict[str, Sequence[ArtifactDraft]]
    )
    """``{output role: [drafts]}``."""
    lineage: Mapping[str, Sequence[Sequence[str]]] | None = None
    """Explicit parents instead of stem matching: ``{output role: [[parent ids], …]}``, one
    entry per draft of that role, in the same order. None to infer lineage."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Free-form JSON metadata recorded on the execution."""

    def __post_init__(self) -> None:
        if not self.success and not self.error:
            raise ResultValidationError("a failed ArtifactResult needs an error message")

    @classmethod
    def failure(cls, error: str, **metadata: Any) -> ArtifactResult:
        """A failed result with ``error`` as its message."""
        return cls(success=False, error=error, metadata=metadata)


@dataclass(frozen=True, kw_only=True)
class PassthroughResult:
    """Existing artifacts passed on unchanged, by output role; creates no artifact."""

    passthrough: Mapping[str, Sequence[str]]
    """``{output role: [artifact ids]}``."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Free-form JSON metadata recorded on the execution."""

    @property
    def success(self) -> bool:
        """Always True: a curator that fails raises or returns a failed ArtifactResult."""
        return True


OperationResult = ArtifactResult | PassthroughResult
"""Anything an execution may return."""


def validate_result(
    op: type[OperationDefinition] | OperationDefinition, result: object
) -> OperationResult:
    """Check ``result`` against ``op``'s declared outputs and return it.

    A failed :class:`ArtifactResult` is returned as is: its artifacts are not looked at.

    Raises:
        ResultValidationError: the result is not a result; a creator returned passthrough; a role
            is unknown or a required one is missing (the message lists the declared roles); a
            draft's type does not match its role; explicit lineage is misaligned; an id is
            malformed.
    """
    cls = op if isinstance(op, type) else type(op)
    where = f"operation {cls.name!r}"
    if not isinstance(result, ArtifactResult | PassthroughResult):
        raise ResultValidationError(
            f"{where} returned {type(result).__name__}; return an ArtifactResult"
            + (" or a PassthroughResult" if cls.is_curator() else "")
        )
    if isinstance(result, ArtifactResult) and not result.success:
        return result
    if isinstance(result, PassthroughResult):
        if not cls.is_curator():
            raise ResultValidationError(
                f"{where} is a creator; only curators may return a PassthroughResult"
            )
        _check_roles(cls, result.passthrough, where)
        for role, ids in result.passthrough.items():
            _check_ids(ids, f"{where}: passthrough[{role!r}]")
        return result
    _check_roles(cls, result.artifacts, where)
    for role, drafts in result.artifacts.items():
        _check_drafts(cls, role, drafts, where)
    if result.lineage is not None:
        _check_lineage(result, where)
    return result


def _check_roles(cls: type[OperationDefinition], given: Mapping[str, Any], where: str) -> None:
    declared = ", ".join(sorted(cls.outputs)) or "(none)"
    if unknown := sorted(set(given) - set(cls.outputs)):
        raise ResultValidationError(
            f"{where} returned unknown output roles {unknown}; its outputs are: {declared}"
        )
    required = {role for role, spec in cls.outputs.items() if spec.required}
    if missing := sorted(required - set(given)):
        raise ResultValidationError(
            f"{where} did not return required output roles {missing}; its outputs are: "
            f"{declared} (return an empty list for a role with nothing in it)"
        )


def _check_drafts(
    cls: type[OperationDefinition], role: str, drafts: Sequence[object], where: str
) -> None:
    expected = cls.outputs[role].artifact_type
    for index, draft in enumerate(drafts):
        if not isinstance(draft, ArtifactDraft):
            raise ResultValidationError(
                f"{where}: artifacts[{role!r}][{index}] is a {type(draft).__name__}; return "
                "drafts such as DataDraft.draft(...) or MetricDraft.draft(...)"
            )
        if expected != "any" and draft.artifact_type != expected:
            raise ResultValidationError(
                f"{where}: artifacts[{role!r}][{index}] ({draft.original_name!r}) is a "
                f"{draft.artifact_type} artifact, but output role {role!r} holds {expected}"
            )


def _check_lineage(result: ArtifactResult, where: str) -> None:
    lineage = result.lineage or {}
    for role, parents in lineage.items():
        drafts = result.artifacts.get(role)
        if drafts is None:
            raise ResultValidationError(
                f"{where}: lineage names role {role!r}, which returned no artifacts; lineage "
                f"roles must be among {sorted(result.artifacts)}"
            )
        if len(parents) != len(drafts):
            raise ResultValidationError(
                f"{where}: lineage[{role!r}] has {len(parents)} entries for {len(drafts)} "
                "artifacts; give one list of parent ids per artifact, in the same order"
            )
        for index, ids in enumerate(parents):
            _check_ids(ids, f"{where}: lineage[{role!r}][{index}]")


def _check_ids(ids: Sequence[object], where: str) -> None:
    if isinstance(ids, str):
        raise ResultValidationError(f"{where} must be a list of artifact ids, got a str")
    for artifact_id in ids:
        if not isinstance(artifact_id, str) or not _ID.match(artifact_id):
            raise ResultValidationError(
                f"{where}: {artifact_id!r} is not an artifact id (32 lower-case hex characters)"
            )
