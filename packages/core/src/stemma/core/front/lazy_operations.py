"""Operation steps of a lazy graph as engine steps: roles become references to other steps.

``apply("scale", Transform, dataset=upstream)`` lowers to a spec whose inputs name the
operation, its key params and its roles (see :mod:`stemma.core.graph.operation_steps`). Here that
spec becomes a :class:`PlannedStep` like one a ``Pipeline`` submits: the operation instance, and per
role either an :class:`OutputReference` to the upstream operation step of the same run or the
literal artifact ids. Its step key stays the spec's fingerprint, so the lazy key holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stemma.core.artifact import Artifact
from stemma.core.engine import (
    FailurePolicy,
    OutputReference,
    PlannedStep,
    StepInput,
    StepResult,
)
from stemma.core.errors import LoweringError
from stemma.core.graph.operation_steps import operation_of, operation_step
from stemma.core.graph.step import ArtifactStep
from stemma.core.graph.step_spec import StepSpec
from stemma.core.operations.registry import get_operation


def is_operation_step(spec: StepSpec) -> bool:
    """Whether ``spec`` was made by ``apply(name, OperationClass, …)``."""
    return spec.step.fn is operation_step


def operation_planned(number: int, spec: StepSpec, numbers: Mapping[str, int]) -> PlannedStep:
    """The engine step of an operation step; ``numbers`` maps the run's fingerprints to steps.

    Raises:
        LoweringError: a role reads from a function step, or names an output role the
            upstream operation does not have (before anything runs).
        UnknownOperationError: the operation is not registered in this process.
    """
    name, params, roles = operation_of(spec.step.inputs)
    cls = get_operation(name)
    settings: dict[str, Any] = {"params": params}
    if spec.step.resources is not None:
        settings["resources"] = spec.step.resources
    inputs: dict[str, StepInput] = {
        role: _role_input(spec, role, value, numbers) for role, value in roles.items()
    }
    return PlannedStep(
        number=number,
        name=spec.name,
        operation=cls.build(**settings),
        inputs=inputs,
        failure_policy=FailurePolicy.CONTINUE,
        skip_cache=False,
        fingerprint=spec.fingerprint,
        depends_on=tuple(dep.fingerprint for dep in spec.deps),
    )


def refuse_operation_deps(spec: StepSpec) -> None:
    """A function step may not take an operation step's handle: it has no path to give.

    Raises:
        LoweringError: naming the step, the dependency and what to do instead.
    """
    for dep in spec.deps:
        if is_operation_step(dep):
            raise LoweringError(
                f"step {spec.name!r}: its input {dep.name!r} is an operation step, whose "
                "outputs are artifacts in the store, not a path; read them with "
                f"resolve({dep.name!r} handle).value['outputs'] and pass the ids, or make "
                f"{spec.name!r} an operation step"
            )


def operation_artifact(
    root: Path, spec: StepSpec, result: StepResult, outputs: Mapping[str, Any]
) -> Artifact:
    """What ``run()`` returns for an operation step: its outputs by role, and its counts."""
    # Cached: nothing of it ran (every unit a cache hit); a step with cancelled units did not.
    answered = result.total_count > 0 and result.cached_count == result.total_count
    return Artifact(
        name=spec.name,
        fingerprint=spec.fingerprint,
        root=root,
        relative_path="",
        artifact_id="",
        value={
            "outputs": {role: sorted(ids) for role, ids in outputs.items()},
            "succeeded": result.succeeded_count,
            "failed": result.failed_count,
        },
        cached=result.metadata.get("cache") == "step" or answered,
    )


def _role_input(spec: StepSpec, role: str, value: Any, numbers: Mapping[str, int]) -> StepInput:
    if isinstance(value, ArtifactStep):
        handle, wanted = value, None
    elif isinstance(value, Mapping):
        pick: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        handle, wanted = pick["step"], str(pick["role"])
    else:
        items: list[Any] = list(value)
        return tuple(sorted({str(item) for item in items}))
    dep = next(d for d in spec.deps if d.step is handle)
    if not is_operation_step(dep):
        raise LoweringError(
            f"step {spec.name!r}: input {role!r} comes from {dep.name!r}, a function step; an "
            "operation reads artifacts, so give it an operation step, output_of(step, role), "
            "or a list of artifact ids"
        )
    upstream = get_operation(operation_of(dep.step.inputs)[0])
    if wanted is None:
        if len(upstream.outputs) != 1:
            raise LoweringError(
                f"step {spec.name!r}: input {role!r}: {dep.name!r} has output roles "
                f"{sorted(upstream.outputs)}; pick one with output_of(step, role)"
            )
        (wanted,) = upstream.outputs
    if wanted not in upstream.outputs:
        raise LoweringError(
            f"step {spec.name!r}: input {role!r}: {dep.name!r} has no output role {wanted!r}; "
            f"its roles: {sorted(upstream.outputs)}"
        )
    return OutputReference(numbers[dep.fingerprint], wanted, upstream.outputs[wanted].artifact_type)
