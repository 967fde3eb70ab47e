"""A step's execution units: counted before anything runs, then made and keyed a chunk at a time.

Pairing and batching stream. The count pass walks the groups' members only (no group id, no
unit kept), so a step's total is known for its progress, and every pairing or batching error
is raised, before the first unit is sent. The units themselves are then made, keyed and looked
up in the execution cache a chunk at a time, so the orchestrator never holds a whole step's
groups, units and keys: at 10^6 units those were most of its memory (benchmarks/README.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, islice

from stemma.core.engine.cache.step_keys import ExecutionKeys
from stemma.core.engine.dispatch.associations import associated_ids, keyed_associations
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.worker.units import UnitGroup
from stemma.core.operations.batching import count_units, iter_units
from stemma.core.operations.pairing import Ancestry, GroupBy, PairedGroup, member_rows

LOOKUP_UNITS = 65_536
"""Units keyed and looked up in the execution cache together: one table scan answers a chunk."""

Groups = tuple[UnitGroup, ...]
"""The paired groups of one unit."""
Keyed = list[tuple[str, Groups]]
"""A chunk of units, each with its execution key."""


@dataclass(frozen=True, slots=True)
class UnitPlan:
    """How many units a step has, and a way to make them, in order, as often as asked."""

    total: int
    """The number of units (cached ones included)."""
    make: Callable[[], Iterator[Groups]]
    """A fresh iterator over the units' groups, in batching order."""
    key_of: Callable[[Groups], str]
    """The execution key of a unit."""

    def keyed_chunks(self, size: int) -> Iterator[Keyed]:
        """The units with their keys, ``size`` at a time (the last chunk may be smaller)."""
        units = self.make()
        while chunk := [(self.key_of(groups), groups) for groups in islice(units, size)]:
            yield chunk


def plan_units(
    ctx: RunContext, step: PlannedStep, inputs: Mapping[str, tuple[str, ...]]
) -> UnitPlan:
    """The units of a step, counted.

    A curator sees all of its inputs at once, as one unit (it works on whole frames: a merge,
    a filter, a pick). A creator's inputs are paired, then batched into units.

    Raises:
        PairingError: the inputs cannot be paired as the operation declares.
        BatchingError: the execution settings cannot pack the groups.
    """
    op = step.operation
    associated = associated_ids(ctx.store, op, inputs)
    encoder = ExecutionKeys(op)

    def key(groups: Groups) -> str:
        merged = groups[0].inputs if len(groups) == 1 else _merged_inputs(groups)
        if not associated:
            return encoder.key(merged)
        return encoder.key({**merged, **keyed_associations(associated, groups)})

    present = {role: ids for role, ids in inputs.items() if ids}
    if op.is_curator():
        whole: Groups = (UnitGroup(group_id=None, inputs=present),)
        return UnitPlan(total=1, make=lambda: iter((whole,)), key_of=key)
    target = op.execution.artifacts_per_unit
    cap = op.execution.max_artifacts_per_unit
    group_by, anchor = op.group_by, op.anchor_role
    ancestry = _ancestry(ctx, inputs) if step.inputs and group_by is GroupBy.LINEAGE else None
    paired = len(op.inputs) > 1 and group_by is not None

    def rows() -> Iterator[dict[str, str]]:
        if not step.inputs:  # a generator: one unit, made from nothing
            return iter((dict[str, str](),))
        return member_rows(present, group_by, ancestry=ancestry, anchor=anchor)

    def make() -> Iterator[Groups]:
        for unit in iter_units(map(PairedGroup.of, rows()), target, cap):
            yield tuple(
                UnitGroup(
                    group_id=group.group_id if paired else None,
                    inputs={role: (artifact_id,) for role, artifact_id in group.members.items()},
                )
                for group in unit
            )

    return UnitPlan(total=count_units(_paired_first(rows()), target, cap), make=make, key_of=key)


def _paired_first(rows: Iterator[dict[str, str]]) -> Iterator[dict[str, str]]:
    """``rows``, its first one taken now: a pairing error comes before any batching error."""
    first = next(rows, None)
    return rows if first is None else chain((first,), rows)


def _ancestry(ctx: RunContext, inputs: Mapping[str, Sequence[str]]) -> Ancestry:
    """Each input's ancestry, read from the store once for both passes."""
    known = ctx.store.ancestry([i for ids in inputs.values() for i in ids])

    def ancestry(artifact_id: str) -> frozenset[str]:
        return known.get(artifact_id, frozenset({artifact_id}))

    return ancestry


def _merged_inputs(groups: Groups) -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {}
    for group in groups:
        for role, ids in group.inputs.items():
            merged.setdefault(role, []).extend(ids)
    return merged
