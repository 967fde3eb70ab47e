"""Validating a step before anything is written: the operation, its settings, its inputs.

Every mistake is a ``ValueError`` naming what is wrong and what is accepted, raised by
``submit`` itself, so a bad step never leaves a row behind.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.engine import OutputReference
from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.registry import get_operation

if TYPE_CHECKING:
    from stemma.core.engine import PlannedStep, StepInput

_ID = re.compile(r"^[0-9a-f]{32}$")


def build_operation(
    operation: type[OperationDefinition] | str,
    *,
    params: Mapping[str, Any] | None,
    resources: Mapping[str, Any] | None,
    execution: Mapping[str, Any] | None,
    environment: Mapping[str, str] | None,
    tool: Mapping[str, Any] | None,
) -> OperationDefinition:
    """The configured operation instance.

    Raises:
        ValueError: an unknown operation, or unknown or invalid settings (named).
    """
    if isinstance(operation, str):
        try:
            cls = get_operation(operation)
        except LookupError as err:
            raise ValueError(str(err)) from None
    elif isinstance(operation, type) and issubclass(operation, OperationDefinition):  # pyright: ignore[reportUnnecessaryIsInstance]
        cls = operation
    else:
        raise ValueError(
            "operation must be an OperationDefinition subclass or a registered name, "
            f"got {operation!r}"
        )
    if cls.name is None:
        raise ValueError(
            f"{cls.__qualname__} is abstract (it has no name); run a concrete operation"
        )
    return cls.build(
        params=params, resources=resources, execution=execution, environment=environment, tool=tool
    )


def normalize_inputs(
    op: OperationDefinition,
    inputs: Mapping[str, Any] | Sequence[Any] | None,
    steps: Mapping[int, PlannedStep],
) -> dict[str, StepInput]:
    """The step's inputs as ``{role: OutputReference | ids}``, checked against the operation.

    Accepts ``{role: OutputReference}``, ``{role: [artifact ids]}``, and, for operations with
    runtime-defined inputs, a list of OutputReferences (one role each, merged by the operation).

    Raises:
        ValueError: unknown, missing or mistyped roles; unknown steps; malformed ids.
    """
    name = op.name
    if inputs is None:
        given: dict[str, Any] = {}
    elif isinstance(inputs, Mapping):
        given = dict(inputs)  # pyright: ignore[reportUnknownArgumentType]
    elif isinstance(inputs, str | bytes):
        raise ValueError(
            f"step {name!r}: inputs must be a dict of roles or a list of references, not a string"
        )
    else:
        refs = list(inputs)
        if refs and all(isinstance(item, str | os.PathLike) for item in refs):
            return _file_inputs(op, refs)
        if not type(op).runtime_defined_inputs:
            raise ValueError(
                f"step {name!r}: a list of inputs is only for operations with runtime-defined "
                f"inputs (such as Merge); give a dict of roles: {', '.join(op.inputs) or '(none)'}"
            )
        given = {f"input_{i}": ref for i, ref in enumerate(refs)}
    declared = op.inputs
    if not type(op).runtime_defined_inputs:
        unknown = sorted(set(given) - set(declared))
        if unknown:
            raise ValueError(
                f"step {name!r}: unknown input role(s) {unknown}; "
                f"declared roles: {', '.join(declared) or '(none)'}"
            )
        missing = sorted(r for r, spec in declared.items() if spec.required and r not in given)
        if missing:
            raise ValueError(f"step {name!r}: missing required input role(s) {missing}")
    return {role: _one_input(name, role, value, op, steps) for role, value in given.items()}


def _file_inputs(op: OperationDefinition, paths: list[Any]) -> dict[str, StepInput]:
    """A list of file paths for a curator's single role, promoted to file refs by content."""
    from stemma.core.engine import FileInputs
    from stemma.core.operations.drafts import FileRefDraft, FinalizedArtifact

    name = op.name
    if not op.is_curator() or len(op.inputs) != 1:
        raise ValueError(
            f"step {name!r}: a list of file paths is only for curators with one input role; "
            "ingest files for a creator with IngestFiles or IngestData first"
        )
    (role,) = op.inputs
    promoted: list[FinalizedArtifact] = []
    for raw in paths:
        path = Path(raw).absolute()
        if not path.exists():
            raise ValueError(f"step {name!r}: input file {str(raw)!r} does not exist ({path})")
        if not path.is_file():
            raise ValueError(
                f"step {name!r}: input {str(raw)!r} is not a file ({path}); give the files "
                "themselves, e.g. sorted(folder.glob('*.csv'))"
            )
        try:
            promoted.append(FileRefDraft.draft(path).finalize())
        except OSError as err:
            raise ValueError(
                f"step {name!r}: input file {str(raw)!r} cannot be read: {err}"
            ) from None
    return {role: FileInputs(tuple(promoted))}


def _one_input(
    name: str | None,
    role: str,
    value: Any,
    op: OperationDefinition,
    steps: Mapping[int, PlannedStep],
) -> StepInput:
    if isinstance(value, OutputReference):
        if value.source_step not in steps:
            raise ValueError(
                f"step {name!r}: input {role!r} refers to step #{value.source_step}, "
                "which is not in this pipeline"
            )
        source = steps[value.source_step].operation.outputs
        if value.role not in source:
            raise ValueError(
                f"step {name!r}: input {role!r} refers to role {value.role!r} of step "
                f"#{value.source_step}, which has roles: {', '.join(source) or '(none)'}"
            )
        expected = op.inputs[role].artifact_type if role in op.inputs else "any"
        if "any" not in (expected, value.artifact_type) and expected != value.artifact_type:
            raise ValueError(
                f"step {name!r}: input {role!r} expects {expected!r} artifacts but step "
                f"#{value.source_step} role {value.role!r} produces {value.artifact_type!r}"
            )
        return value
    if isinstance(value, list | tuple):
        ids = [str(v) for v in value]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        bad = [i for i in ids if not _ID.match(i)]
        if bad:
            raise ValueError(
                f"step {name!r}: input {role!r} holds values that are not artifact ids "
                f"(32 hex characters): {bad[:3]}"
            )
        return tuple(ids)
    raise ValueError(
        f"step {name!r}: input {role!r} must be an OutputReference (step.output(role)) or a list "
        f"of artifact ids, got {type(value).__name__}"
    )
