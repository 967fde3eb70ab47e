"""What a worker loads for a unit's inputs, as each role's ``InputSpec`` asks.

* ``hydrate=False``: ids and metadata only; the content is dropped before the operation sees it,
  so nothing is materialized and curator frames carry no values. (The store still reads the
  rows: the saving is the operation's, not yet the read's.)
* ``with_associated=(types…)``: for every input artifact, the artifacts of those types found by
  walking lineage forward from it (a dataset's metrics, say), loaded with their content and
  handed over beside the inputs: ``PreprocessInput.associated`` for creators, an
  ``associated_{type}`` column of id lists in a curator's frame.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.operations.specs import InputSpec
from stemma.core.pipeline.units import ExecutionUnit
from stemma.core.store import PipelineStore

Associated = dict[str, dict[str, dict[str, list[FinalizedArtifact]]]]
"""``{role: {input artifact id: {type: [associated artifacts]}}}``."""


def load_inputs(
    unit: ExecutionUnit, store: PipelineStore
) -> tuple[dict[str, list[FinalizedArtifact]], Associated]:
    """The unit's inputs by role (hydrated or not, per role) and their associated artifacts.

    Raises:
        LookupError: input artifacts missing from the store (the message lists some).
    """
    roles = unit.inputs()
    specs = type(unit.operation).inputs
    wanted = {artifact_id for ids in roles.values() for artifact_id in ids}
    loaded = store.load_artifacts(wanted) if wanted else {}
    if missing := sorted(wanted - set(loaded)):
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if missing[10:] else "")
        raise LookupError(f"{len(missing)} input artifacts are not in the store: {shown}")
    inputs: dict[str, list[FinalizedArtifact]] = {}
    for role, ids in roles.items():
        spec = specs.get(role, InputSpec())
        artifacts = [loaded[i] for i in ids]
        inputs[role] = artifacts if spec.hydrate else [_dry(a) for a in artifacts]
    return inputs, _associated(roles, specs, store)


def _dry(artifact: FinalizedArtifact) -> FinalizedArtifact:
    return dataclasses.replace(artifact, content=None) if artifact.content is not None else artifact


def _associated(
    roles: Mapping[str, tuple[str, ...]], specs: Mapping[str, InputSpec], store: PipelineStore
) -> Associated:
    found: Associated = {}
    for role, ids in roles.items():
        spec = specs.get(role, InputSpec())
        if not spec.with_associated or not ids:
            continue
        per_input: dict[str, dict[str, list[str]]] = {i: {} for i in ids}
        for artifact_type in spec.with_associated:
            for source, targets in store.descendants(ids, artifact_type=artifact_type).items():
                per_input[source][artifact_type] = sorted(targets)
        every = {t for types in per_input.values() for ts in types.values() for t in ts}
        content = store.load_artifacts(every) if every else {}
        found[role] = {
            source: {kind: [content[t] for t in ts if t in content] for kind, ts in types.items()}
            for source, types in per_input.items()
        }
    return found
