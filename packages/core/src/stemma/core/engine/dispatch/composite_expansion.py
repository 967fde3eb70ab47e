"""A composite expanded into Pipeline steps: ``compose`` runs at submit time, recording.

Each ``ctx.run`` becomes a real step named ``{prefix}.{operation name}`` (``prefix`` defaults
to the composite's name), submitted through the pipeline, so it gets its own dispatch, cache
keys, parallelism and failure handling; references are wired to the steps' OutputReferences.
Because every inner step commits its own artifacts and step-boundary edges, an expanded
composite always behaves as ``intermediates="expose"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stemma.core.engine.planned_step import StepInput
from stemma.core.engine.references import OutputReference, StepFuture, StepResult
from stemma.core.operations.composite import CompositeContext, CompositeDefinition, Intermediates
from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.kinds import OperationKind

Submit = Callable[..., StepFuture]
"""``Pipeline.submit``."""


def with_intermediates(op: OperationDefinition, intermediates: str | None) -> OperationDefinition:
    """``op`` with its intermediates policy set (composites only).

    Raises:
        ValueError: ``op`` is not a composite, or the policy is unknown.
    """
    if intermediates is None:
        return op
    if not isinstance(op, CompositeDefinition):
        raise ValueError(f"step {op.name!r}: intermediates is only for composite operations")
    try:
        policy = Intermediates(intermediates)
    except ValueError:
        accepted = ", ".join(p.value for p in Intermediates)
        raise ValueError(
            f"step {op.name!r}: unknown intermediates {intermediates!r}; accepted: {accepted}"
        ) from None
    return op.model_copy(update={"intermediates": policy})


@dataclass(frozen=True)
class ExpandedComposite:
    """What ``Pipeline.expand`` returns: the composite's outputs and the steps it became."""

    name: str
    outputs: Mapping[str, OutputReference]
    """Per composite output role, the reference to the step output bound to it."""
    steps: tuple[StepFuture, ...] = field(default_factory=tuple[StepFuture, ...])
    """The submitted steps, in ``ctx.run`` order."""

    def output(self, role: str) -> OutputReference:
        """The reference bound to the composite's output ``role``.

        Raises:
            ValueError: no such role; the message lists the roles there are.
        """
        try:
            return self.outputs[role]
        except KeyError:
            raise ValueError(
                f"composite {self.name!r} has no output role {role!r}; "
                f"its roles: {', '.join(self.outputs) or '(none)'}"
            ) from None

    def result(self, timeout: float | None = None) -> list[StepResult]:
        """Wait for every step; their results in ``ctx.run`` order."""
        return [step.result(timeout) for step in self.steps]


class RecordingContext(CompositeContext[StepInput]):
    """Binds references to step inputs, submitting one step per ``ctx.run``."""

    def __init__(
        self,
        composite: CompositeDefinition,
        inputs: Mapping[str, StepInput],
        submit: Submit,
        prefix: str,
    ) -> None:
        super().__init__(composite, inputs)
        self._submit = submit
        self._prefix = prefix
        self.futures: list[StepFuture] = []

    def _execute(
        self, index: int, operation: OperationDefinition, inputs: Mapping[str, StepInput]
    ) -> Mapping[str, StepInput]:
        future = self._submit(
            type(operation),
            {role: list(v) if isinstance(v, tuple) else v for role, v in inputs.items()},
            operation.params_model().model_dump() or None,  # {} breaks ops without Params
            name=f"{self._prefix}.{operation.name}",
            resources=operation.resources.model_dump(),
            execution=operation.execution.model_dump(),
            environment=operation.environment,
            tool=operation.tool,
        )
        self.futures.append(future)
        return {role: future.output(role) for role in operation.outputs}


def expand_composite(
    composite: OperationDefinition,
    inputs: Mapping[str, StepInput],
    submit: Submit,
    *,
    prefix: str | None,
    intermediates: str,
) -> ExpandedComposite:
    """Run ``compose`` against a recording context, submitting its operations as steps.

    Raises:
        ValueError: ``composite`` is not a composite; a policy other than ``expose``; a
            wiring mistake in ``compose`` (steps submitted before it stay submitted).
    """
    if composite.kind is not OperationKind.COMPOSITE or not isinstance(
        composite, CompositeDefinition
    ):
        raise ValueError(f"{composite.name!r} is not a composite operation; submit it instead")
    if Intermediates(intermediates) is not Intermediates.EXPOSE:
        raise ValueError(
            f"composite {composite.name!r}: an expanded composite commits every step, so its "
            f"intermediates are always 'expose' (got {intermediates!r}); run it collapsed with "
            "pipeline.run(..., intermediates=...) to discard or persist them"
        )
    ctx = RecordingContext(composite, inputs, submit, prefix or str(composite.name))
    outputs: dict[str, Any] = ctx.compose()
    bound = {role: ref for role, ref in outputs.items() if isinstance(ref, OutputReference)}
    if passed := sorted(set(outputs) - set(bound)):
        raise ValueError(
            f"composite {composite.name!r}: output(s) {passed} are bound to the composite's "
            "own inputs; an expanded composite's outputs must come from ctx.run"
        )
    return ExpandedComposite(str(composite.name), bound, tuple(ctx.futures))
