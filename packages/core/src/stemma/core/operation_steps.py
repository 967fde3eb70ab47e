"""Operations as lazy steps: ``apply(name, OperationClass, params=…, role=upstream)``.

An operation step lowers like a function step: its key holds the operation's registered name,
its version (the class's ``version`` unless given), its full params with defaults and, per input
role, the upstream step's key (or the literal artifact ids). It runs as a one-step ``Pipeline``
on the same root, so the creator or curator goes through the same dispatch, workers, caches and
commits as a Pipeline step. Its output directory holds ``outputs.json`` (the output artifact ids
by role), which is how a downstream operation step finds its inputs; its value says the same,
with the Pipeline run that built it.

Resources and execution settings are not part of a lazy operation step (they are never part of
a key); steps that need them belong in a ``Pipeline``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.context import OUT, current_root
from stemma.core.errors import LoweringError

if TYPE_CHECKING:  # operations load pydantic: only operation steps pay for it
    from stemma.core.operations.definition import OperationDefinition

MANIFEST = "outputs.json"
"""The file in an operation step's output directory: ``{"outputs": {role: [ids]}}``."""


def output_of(step: Any, role: str) -> dict[str, Any]:
    """Refer to one output role of an upstream operation step (needed when it has several).

    ``apply("fit", Fit, data=output_of(split, "train"))``.
    """
    return {"step": step, "role": role}


def operation_inputs(
    name: str, operation: type[OperationDefinition], version: str | None, given: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The version and the function-step inputs of an operation step, checked now.

    Raises:
        LoweringError: an abstract operation, an unknown or missing role.
        ValueError: unknown or invalid params (named, with what is accepted).
    """
    if operation.name is None:
        raise LoweringError(f"step {name!r}: {operation.__qualname__} is abstract (no name)")
    roles = {role: value for role, value in given.items() if role != "params"}
    params: Mapping[str, Any] = given.get("params") or {}
    built = operation.build(params=params, resources=None, execution=None)
    declared = operation.inputs
    if plain := sorted(role for role, value in roles.items() if isinstance(value, str | bytes)):
        raise LoweringError(
            f"step {name!r}: input role(s) {plain} got a single string; give an upstream step, "
            "output_of(step, role), or a list of artifact ids"
        )
    if not operation.runtime_defined_inputs:
        if unknown := sorted(set(roles) - set(declared)):
            raise LoweringError(
                f"step {name!r}: unknown input role(s) {unknown} for {operation.name!r}; "
                f"declared roles: {', '.join(declared) or '(none)'}"
            )
        if missing := sorted(r for r, s in declared.items() if s.required and r not in roles):
            raise LoweringError(f"step {name!r}: missing required input role(s) {missing}")
    inputs = {
        "operation": operation.name,
        "params": built.key_params(),
        "roles": roles,
        "output": OUT,
    }
    return version or operation.version, inputs


def run_operation_step(
    *, operation: str, params: Mapping[str, Any], roles: Mapping[str, Any], output: str
) -> dict[str, Any]:
    """Run the operation as a one-step Pipeline on the runner's root; write its manifest.

    Raises:
        RuntimeError: the step did not complete, or produced nothing (the message says why
            and where the failure logs are).
    """
    from stemma.core.operations.registry import get_operation
    from stemma.core.pipeline.pipeline import Pipeline  # the Pipeline needs the Delta store

    cls = get_operation(operation)
    inputs = {role: _input_ids(role, value) for role, value in roles.items()}
    pipeline = Pipeline.create(_pipeline_name(operation), root=current_root())
    try:
        result = pipeline.run(cls, inputs=inputs or None, params=dict(params) or None)
        status = result.metadata.get("status")
        if status != "completed" or result.failed_count:  # never cache a partial result
            raise RuntimeError(
                f"operation {operation!r} {status}: {result.metadata.get('error') or ''} "
                f"(failure logs under {current_root() / 'logs' / 'failures'})"
            )
        outputs = {
            role: sorted(pipeline.artifact_ids(result.output(role))) for role in result.output_roles
        }
    finally:
        pipeline.finalize()
    folder = Path(output)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_text(json.dumps({"outputs": outputs}, sort_keys=True, indent=1))
    return {
        "outputs": outputs,
        "pipeline_run_id": pipeline.run_id,
        "succeeded": result.succeeded_count,
        "failed": result.failed_count,
    }


def _input_ids(role: str, value: Any) -> list[str]:
    """One role's artifact ids: an upstream step's output (by path) or literal ids."""
    if isinstance(value, str):
        return _manifest_role(role, Path(value), None)
    if isinstance(value, Mapping):
        pick: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return _manifest_role(role, Path(str(pick["step"])), str(pick["role"]))
    items: list[Any] = list(value)
    return [str(item) for item in items]


def _manifest_role(role: str, folder: Path, wanted: str | None) -> list[str]:
    try:
        outputs: dict[str, list[str]] = json.loads((folder / MANIFEST).read_text())["outputs"]
    except (OSError, ValueError, KeyError) as err:
        raise RuntimeError(
            f"input {role!r} comes from a step that is not an operation step ({folder}): {err}"
        ) from None
    if wanted is None:
        if len(outputs) != 1:
            raise RuntimeError(
                f"input {role!r}: the upstream step has output roles {sorted(outputs)}; "
                "pick one with output_of(step, role)"
            )
        (wanted,) = outputs
    if wanted not in outputs:
        raise RuntimeError(
            f"input {role!r}: the upstream step has no output role {wanted!r}; "
            f"its roles: {sorted(outputs)}"
        )
    return outputs[wanted]


def _pipeline_name(operation: str) -> str:
    return "lazy." + re.sub(r"[^A-Za-z0-9_.-]", "_", operation)[:100]
