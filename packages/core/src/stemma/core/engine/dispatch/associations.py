"""``with_associated`` in the keys: what a unit will be handed beside its inputs is part of it.

A role declaring ``with_associated=("metric",)`` hands the operation, for every input, the
metrics derived from it. Those can appear later (another step scores the inputs) under an
unchanged step key, so such a step skips the step-level cache, and each unit's execution key
holds the ids of the associated artifacts it will be given: a new metric is a miss, an
unchanged set a hit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stemma.core.engine.worker.units import UnitGroup
from stemma.core.operations.definition import OperationDefinition
from stemma.core.store.protocols import RunStore

Associations = dict[str, dict[str, dict[str, list[str]]]]
"""``{role: {type: {input id: [associated ids]}}}``."""


def reads_associations(op: OperationDefinition) -> bool:
    """Whether any input role of ``op`` asks for associated artifacts."""
    return any(spec.with_associated for spec in type(op).inputs.values())


def associated_ids(
    store: RunStore, op: OperationDefinition, inputs: Mapping[str, Sequence[str]]
) -> Associations:
    """Per role and type, each input's associated artifact ids (one lineage walk per type)."""
    found: Associations = {}
    for role, spec in type(op).inputs.items():
        ids = list(inputs.get(role, ()))
        for kind in spec.with_associated if ids else ():
            derived = store.descendants(ids, artifact_type=kind)
            found.setdefault(role, {})[kind] = {i: sorted(derived.get(i, ())) for i in ids}
    return found


def keyed_associations(
    associations: Associations, groups: Sequence[UnitGroup]
) -> dict[str, list[str]]:
    """The unit's associated ids as extra key entries ``{"@associated:{role}:{type}": ids}``.

    ``@`` cannot start a declared role name, so these never collide with real roles.
    """
    keyed: dict[str, list[str]] = {}
    for role, per_type in associations.items():
        members = [i for group in groups for i in group.inputs.get(role, ())]
        for kind, by_input in per_type.items():
            keyed[f"@associated:{role}:{kind}"] = sorted(
                {a for i in members for a in by_input.get(i, [])}
            )
    return keyed
