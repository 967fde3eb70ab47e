"""``CompositeDefinition``: an operation made of other operations, wired in ``compose(ctx)``.

A composite declares ``inputs`` / ``outputs`` / ``Params`` like any operation and overrides
``compose``. There it asks ``ctx.input(role)`` for its inputs, runs operations with
``ctx.run(Op, inputs={role: ref}, params=...)`` (each returns a :class:`CompositeHandle`), and
binds its outputs with ``ctx.output(role, handle.output(r))``. The same ``compose`` runs
collapsed in one worker (``pipeline.run``) or expanded into steps (``pipeline.expand``); the
contexts of both share the bookkeeping below, and each supplies ``_execute``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

from pydantic import Field

from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.registry import get_operation

V = TypeVar("V")
"""What a context binds a reference to: artifacts (collapsed) or step outputs (expanded)."""


class Intermediates(StrEnum):
    """What happens to the artifacts of a composite's non-final operations."""

    DISCARD = "discard"
    """Only the final artifacts are committed, with shortcut edges from the initial inputs."""
    PERSIST = "persist"
    """Intermediates and their internal edges too, the edges marked ``step_boundary=False``."""
    EXPOSE = "expose"
    """Like PERSIST, but the internal edges are ``step_boundary=True``."""


class CompositeDefinition(OperationDefinition):
    """Base class of composites: declare roles and Params, and override :meth:`compose`."""

    name = None
    intermediates: Intermediates = Field(default=Intermediates.DISCARD)
    """Set per step (``pipeline.run(..., intermediates="persist")``); part of both keys."""

    def compose(self, ctx: CompositeContext[Any]) -> None:
        """Wire the operations: ``ctx.input``, ``ctx.run``, ``ctx.output``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement compose")

    def overrides(self) -> dict[str, Any]:
        """The base overrides plus the intermediates policy: it changes what is committed."""
        return {**super().overrides(), "intermediates": self.intermediates.value}


@dataclass(frozen=True)
class CompositeRef:
    """A composite-internal reference: a role of the composite's inputs or of one ``ctx.run``."""

    source: int
    """-1 for the composite's own inputs; else the index of the ``ctx.run`` call."""
    role: str
    artifact_type: str


@dataclass(frozen=True)
class CompositeHandle:
    """What ``ctx.run`` returns: the outputs of one inner operation."""

    index: int
    operation: OperationDefinition
    refs: Mapping[str, CompositeRef] = field(default_factory=dict[str, CompositeRef])

    def output(self, role: str) -> CompositeRef:
        """A reference to ``role`` of this operation's outputs.

        Raises:
            ValueError: the operation has no such output role; the message lists its roles.
        """
        try:
            return self.refs[role]
        except KeyError:
            raise ValueError(
                f"operation {self.operation.name!r} has no output role {role!r}; "
                f"its roles: {', '.join(self.refs) or '(none)'}"
            ) from None


class CompositeContext(Generic[V]):
    """The ``ctx`` of ``compose``: checks the wiring, and binds each reference to a value."""

    def __init__(self, composite: CompositeDefinition, inputs: Mapping[str, V]) -> None:
        self.composite = composite
        self.values: dict[CompositeRef, V] = {}
        self.runs: list[CompositeHandle] = []
        self.outputs: dict[str, CompositeRef] = {}
        for role, value in inputs.items():
            spec = composite.inputs.get(role)
            self.values[self._input_ref(role, spec.artifact_type if spec else "any")] = value

    @staticmethod
    def _input_ref(role: str, artifact_type: str) -> CompositeRef:
        return CompositeRef(-1, role, artifact_type)

    def input(self, role: str) -> CompositeRef:
        """A reference to the composite's input ``role``.

        Raises:
            ValueError: the composite declares no such role, or it was not given.
        """
        found = next((r for r in self.values if r.source == -1 and r.role == role), None)
        if found is None:
            raise ValueError(
                f"composite {self.composite.name!r}: no input {role!r}; given: "
                f"{', '.join(r.role for r in self.values if r.source == -1) or '(none)'}"
            )
        return found

    def run(
        self,
        operation: type[OperationDefinition] | str,
        inputs: Mapping[str, CompositeRef] | None = None,
        params: Mapping[str, Any] | None = None,
        **settings: Any,
    ) -> CompositeHandle:
        """Run ``operation`` on references; return a handle to its outputs.

        ``settings`` are ``resources``, ``execution``, ``environment`` and ``tool``.

        Raises:
            ValueError: an unknown operation, role or setting, or a reference from elsewhere.
        """
        cls = get_operation(operation) if isinstance(operation, str) else operation
        op = cls.build(params=params, **settings)
        given = dict(inputs or {})
        if not cls.runtime_defined_inputs:
            if unknown := sorted(set(given) - set(cls.inputs)):
                raise ValueError(
                    f"composite {self.composite.name!r}: {cls.name!r} has no input role(s) "
                    f"{unknown}; declared: {', '.join(cls.inputs) or '(none)'}"
                )
            if missing := sorted(r for r, s in cls.inputs.items() if s.required and r not in given):
                raise ValueError(
                    f"composite {self.composite.name!r}: {cls.name!r} misses input(s) {missing}"
                )
        for role, ref in given.items():
            if ref not in self.values:
                raise ValueError(
                    f"composite {self.composite.name!r}: input {role!r} of {cls.name!r} is not "
                    "a reference from ctx.input() or an earlier handle.output() of this compose"
                )
        index = len(self.runs)
        produced = self._execute(index, op, {role: self.values[r] for role, r in given.items()})
        refs = {
            role: CompositeRef(index, role, spec.artifact_type) for role, spec in op.outputs.items()
        }
        for role, ref in refs.items():
            self.values[ref] = produced[role]
        handle = CompositeHandle(index, op, refs)
        self.runs.append(handle)
        return handle

    def output(self, role: str, ref: CompositeRef) -> None:
        """Bind the composite's output ``role`` to ``ref``.

        Raises:
            ValueError: the composite declares no such output, or ``ref`` is not from here.
        """
        if role not in self.composite.outputs:
            raise ValueError(
                f"composite {self.composite.name!r}: no output role {role!r}; declared: "
                f"{', '.join(self.composite.outputs)}"
            )
        if ref not in self.values:
            raise ValueError(f"composite {self.composite.name!r}: output {role!r} is unbound")
        self.outputs[role] = ref

    def compose(self) -> dict[str, V]:
        """Run the composite's ``compose`` against this context; return its bound outputs.

        Raises:
            ValueError: a declared output was never bound.
        """
        self.composite.compose(self)
        if missing := sorted(set(self.composite.outputs) - set(self.outputs)):
            raise ValueError(
                f"composite {self.composite.name!r}: compose never bound output(s) {missing} "
                "(call ctx.output(role, handle.output(...)))"
            )
        return {role: self.values[ref] for role, ref in self.outputs.items()}

    def _execute(
        self, index: int, operation: OperationDefinition, inputs: Mapping[str, V]
    ) -> Mapping[str, V]:
        raise NotImplementedError
