"""Operations as lazy steps: ``apply(name, OperationClass, params=…, role=upstream)``.

An operation step lowers like a function step: its key holds the operation's registered name,
its version (the class's ``version`` unless given), its full params with defaults and, per input
role, the upstream step's key (or the literal artifact ids). It runs as an engine step like any
``Pipeline`` step (``stemma.core.front.lazy_door`` translates it): its units are planned,
cached per execution key, packed and dispatched on the run's backend, with one execution row
per unit. Its artifact has no path: its value lists its output artifact ids by role.

Resources (``apply(..., resources=…)``) never enter a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stemma.core.errors import LoweringError
from stemma.core.graph.markers import OUT

if TYPE_CHECKING:  # operations load pydantic: only operation steps pay for it
    from stemma.core.operations.definition import OperationDefinition


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


def operation_step(
    *, operation: str, params: Mapping[str, Any], roles: Mapping[str, Any], output: str
) -> None:
    """The function an operation step's handle names; the engine runs the operation instead.

    Raises:
        TypeError: always; an operation step is never called as a function.
    """
    del params, roles, output
    raise TypeError(f"operation {operation!r} runs as an engine step, never as a function")


def operation_of(spec_inputs: Mapping[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """An operation step's registered name, key params and roles, from its handle's inputs."""
    return (
        str(spec_inputs["operation"]),
        dict(spec_inputs["params"]),
        dict(spec_inputs["roles"]),
    )
