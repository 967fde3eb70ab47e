"""A composite run collapsed in one worker: every ``ctx.run`` an eager creator lifecycle.

Artifacts made by one inner operation are handed to the next in memory (the loader looks in
the composite's pool before the store). The unit's outcome carries the final artifacts under the
composite's output roles; the intermediates policy decides what else is committed:

* DISCARD: only the final artifacts, with shortcut edges from the composite's inputs to them
  (found by walking the internal lineage back), ``step_boundary=True``.
* PERSIST: also every intermediate artifact and internal edge, the internal edges marked
  ``step_boundary=False``; the shortcut edges stay, so step-level lineage still links the
  composite's inputs to its outputs.
* EXPOSE: every artifact and internal edge, all ``step_boundary=True``; no shortcut edges.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import cast

from stemma.core.engine.worker.creator_lifecycle import (
    LifecycleOutcome,
    failure_outcome,
    run_creator,
)
from stemma.core.engine.worker.materialize import Loader
from stemma.core.engine.worker.units import ExecutionUnit, UnitGroup
from stemma.core.execution_records import LineageEdge
from stemma.core.operations.composite import CompositeContext, CompositeDefinition, Intermediates
from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.operations.kinds import OperationKind
from stemma.core.operations.pairing import pair_inputs
from stemma.core.run_ids import new_attempt_id

Artifacts = tuple[FinalizedArtifact, ...]


class InnerOperationError(RuntimeError):
    """An operation run by ``ctx.run`` failed; it carries that operation's outcome."""

    def __init__(self, message: str, outcome: LifecycleOutcome) -> None:
        super().__init__(message)
        self.outcome = outcome


def run_composite(
    unit: ExecutionUnit,
    inputs: Mapping[str, Sequence[FinalizedArtifact]],
    *,
    load: Loader,
) -> LifecycleOutcome:
    """Run the unit's composite collapsed; never raises (a failure is an outcome)."""
    ctx = CollapsedContext(unit, inputs, load)
    try:
        final = ctx.compose()
    except InnerOperationError as err:
        inner = err.outcome
        return LifecycleOutcome(
            success=False,
            error=f"{err}\n{inner.error or ''}",
            summary=str(err)[:2000],
            tool_output=inner.tool_output,
        )
    except Exception as err:
        return failure_outcome(err, ctx.tool_output(), prefix="compose failed: ")
    return ctx.outcome(final)


class CollapsedContext(CompositeContext[Artifacts]):
    """Binds references to finalized artifacts, running each operation as it is asked for."""

    def __init__(
        self, unit: ExecutionUnit, inputs: Mapping[str, Sequence[FinalizedArtifact]], load: Loader
    ) -> None:
        super().__init__(
            cast(CompositeDefinition, unit.operation),
            {role: tuple(items) for role, items in inputs.items()},
        )
        self.unit = unit
        self._load_from_store = load
        self.initial = {a.artifact_id: (role, a) for role, items in inputs.items() for a in items}
        self.pool: dict[str, FinalizedArtifact] = {i: a for i, (_, a) in self.initial.items()}
        self.produced: dict[str, FinalizedArtifact] = {}
        self.edges: dict[LineageEdge, None] = {}
        self.logs: list[str] = []

    def _execute(
        self, index: int, operation: OperationDefinition, inputs: Mapping[str, Artifacts]
    ) -> Mapping[str, Artifacts]:
        if operation.kind is not OperationKind.CREATOR:
            raise TypeError(
                f"composite {self.composite.name!r}: {operation.name!r} is a "
                f"{operation.kind.value}; a collapsed composite runs creators only "
                "(expand the composite with pipeline.expand to use it)"
            )
        inner = replace(
            self.unit,
            operation=operation,
            step_name=f"{self.unit.step_name}.{operation.name}",
            version=type(operation).version,
            groups=self._groups(operation, inputs),
        )
        outcome = run_creator(inner, inputs, run_id=new_attempt_id(), load=self._load)
        if outcome.tool_output:
            self.logs.append(f"--- {operation.name} (#{index})\n{outcome.tool_output}")
        if not outcome.success:
            raise InnerOperationError(
                f"composite {self.composite.name!r}: operation #{index} {operation.name!r} "
                f"failed: {outcome.summary}",
                outcome,
            )
        for artifact in outcome.artifacts:
            self.pool.setdefault(artifact.artifact_id, artifact)
            self.produced.setdefault(artifact.artifact_id, artifact)
        self.edges.update(dict.fromkeys(outcome.edges))
        return {
            role: tuple(self.pool[i] for i in outcome.outputs.get(role, ()))
            for role in operation.outputs
        }

    def _groups(
        self, operation: OperationDefinition, inputs: Mapping[str, Artifacts]
    ) -> tuple[UnitGroup, ...]:
        ids = {role: [a.artifact_id for a in items] for role, items in inputs.items()}
        if len(operation.inputs) <= 1 or operation.group_by is None:
            return (UnitGroup(group_id=None, inputs={r: tuple(v) for r, v in ids.items()}),)
        paired = pair_inputs(
            ids, operation.group_by, ancestry=self._ancestry, anchor=operation.anchor_role
        )
        return tuple(
            UnitGroup(group_id=g.group_id, inputs={r: (i,) for r, i in g.members.items()})
            for g in paired
        )

    def _ancestry(self, artifact_id: str) -> frozenset[str]:
        """The artifact and its ancestors inside this composite (for LINEAGE pairing)."""
        reached, stack = {artifact_id}, [artifact_id]
        while stack:
            target = stack.pop()
            for edge in self.edges:
                if edge.target_artifact_id == target and edge.source_artifact_id not in reached:
                    reached.add(edge.source_artifact_id)
                    stack.append(edge.source_artifact_id)
        return frozenset(reached)

    def _load(self, artifact_ids: Collection[str]) -> Mapping[str, FinalizedArtifact]:
        found = {i: self.pool[i] for i in artifact_ids if i in self.pool}
        if rest := [i for i in artifact_ids if i not in found]:
            found.update(self._load_from_store(rest))
        return found

    def tool_output(self) -> str | None:
        """What the inner operations printed, each under a header line."""
        return "\n".join(self.logs) or None

    def outcome(self, final: Mapping[str, Artifacts]) -> LifecycleOutcome:
        """The unit's outcome under the composite's intermediates policy."""
        policy = self.composite.intermediates
        outputs = {
            role: tuple(dict.fromkeys(a.artifact_id for a in v)) for role, v in final.items()
        }
        final_ids = {i for ids in outputs.values() for i in ids}
        shortcuts = self._shortcuts(final)
        internal = list(self.edges)
        if policy is Intermediates.DISCARD:
            artifacts = [a for i, a in self.produced.items() if i in final_ids]
            edges = shortcuts
        elif policy is Intermediates.PERSIST:
            pairs = {(e.source_artifact_id, e.target_artifact_id) for e in shortcuts}
            hidden = [
                replace(e, step_boundary=False)
                for e in internal
                if (e.source_artifact_id, e.target_artifact_id) not in pairs
            ]
            artifacts, edges = list(self.produced.values()), [*shortcuts, *hidden]
        else:
            artifacts = list(self.produced.values())
            edges = [replace(e, step_boundary=True) for e in internal]
        return LifecycleOutcome(
            success=True,
            outputs=outputs,
            artifacts=tuple(artifacts),
            edges=tuple(dict.fromkeys(edges)),
            metadata={
                "composite": {
                    "intermediates": policy.value,
                    "operations": [str(h.operation.name) for h in self.runs],
                }
            },
            tool_output=self.tool_output(),
        )

    def _shortcuts(self, final: Mapping[str, Artifacts]) -> list[LineageEdge]:
        edges: list[LineageEdge] = []
        for role, items in final.items():
            for out in items:
                for source_id in sorted(self._ancestry(out.artifact_id) - {out.artifact_id}):
                    if source_id not in self.initial:
                        continue
                    source_role, source = self.initial[source_id]
                    edges.append(
                        LineageEdge(
                            source_artifact_id=source_id,
                            target_artifact_id=out.artifact_id,
                            source_role=source_role,
                            target_role=role,
                            source_artifact_type=source.artifact_type,
                            target_artifact_type=out.artifact_type,
                        )
                    )
        return edges
