"""Pairing: align the artifacts of several input roles into the groups one execution consumes.

Pairing runs before batching, so a batch never splits a group, and each group carries an id that
depends only on its members: the co-input lineage edges of a group share it, in every run and
whatever the batching. Everything here is pure; ancestry comes in through a callback.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from stemma.core.errors import PairingError
from stemma.core.identity import hash_plain

Ancestry = Callable[[str], frozenset[str]]
"""Given an artifact id, the ids of its ancestors, the artifact itself included."""

_GROUP_KIND = "paired_group"


class GroupBy(StrEnum):
    """How the artifacts of several input roles are paired into groups."""

    ZIP = "zip"
    """Positionally: the i-th artifact of every role together; every role the same length."""
    LINEAGE = "lineage"
    """Exactly two roles; every two artifacts that share an ancestor form a group."""
    CROSS_PRODUCT = "cross_product"
    """Every combination of one artifact per role."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PairedGroup:
    """The artifacts one execution consumes together: one per role.

    Build it with :meth:`of`, which computes the id; equality and hashing use the id only.
    """

    group_id: str
    """xxh3_128 over the sorted ``(role, artifact id)`` members: stable across runs and batches."""
    members: Mapping[str, str] = field(compare=False)
    """``{role: artifact id}``, read-only, roles in sorted order."""

    @classmethod
    def of(cls, members: Mapping[str, str]) -> PairedGroup:
        """Return the group of ``members`` (``{role: artifact id}``) with its id computed."""
        ordered = dict(sorted(members.items()))
        return cls(group_id=group_id_of(ordered), members=MappingProxyType(ordered))

    @property
    def artifact_ids(self) -> tuple[str, ...]:
        """The members' artifact ids, in role order."""
        return tuple(self.members.values())


def group_id_of(members: Mapping[str, str]) -> str:
    """Return the id of a paired group: a tagged xxh3_128 over its sorted (role, id) members."""
    return hash_plain([_GROUP_KIND, [[role, members[role]] for role in sorted(members)]])


def pair_inputs(
    inputs: Mapping[str, Sequence[str]],
    group_by: GroupBy | None,
    *,
    ancestry: Ancestry | None = None,
    anchor: str | None = None,
) -> list[PairedGroup]:
    """Pair the artifacts of each input role into the groups executions consume.

    Roles are taken in sorted order. Except under ZIP, where position is the pairing, each
    role's ids are sorted first, so the groups and their order do not depend on input order.
    A group that comes out twice (a repeated id) is kept once.

    Args:
        inputs: ``{role: artifact ids}``.
        group_by: the operation's strategy; None (or a single role) makes every artifact its
            own one-member group.
        ancestry: required by LINEAGE and anchor matching; see :data:`Ancestry`.
        anchor: the primary role for anchor matching: each of its artifacts is paired on its
            own with the artifacts of every other role it shares an ancestor with (one group
            per combination when a role has several), and an anchor artifact without a match
            in some role forms no group.

    Returns:
        The groups, in a deterministic order.

    Raises:
        PairingError: ZIP over roles of unequal lengths; LINEAGE over other than two roles;
            LINEAGE or anchor matching without ``ancestry``; an anchor that is not an input
            role, or combined with ZIP or CROSS_PRODUCT.
    """
    roles = sorted(inputs)
    if anchor is not None:
        return _dedupe(_by_anchor(inputs, roles, group_by, anchor, ancestry))
    if group_by is None or len(roles) <= 1:
        return _dedupe(
            PairedGroup.of({role: artifact_id})
            for role in roles
            for artifact_id in sorted(inputs[role])
        )
    if group_by is GroupBy.ZIP:
        return _dedupe(_zip(inputs, roles))
    if group_by is GroupBy.CROSS_PRODUCT:
        columns = [sorted(inputs[role]) for role in roles]
        return _dedupe(
            PairedGroup.of(dict(zip(roles, combination, strict=True)))
            for combination in itertools.product(*columns)
        )
    return _dedupe(_lineage(inputs, roles, _require(ancestry, "LINEAGE pairing")))


def _zip(inputs: Mapping[str, Sequence[str]], roles: list[str]) -> Iterable[PairedGroup]:
    lengths = {role: len(inputs[role]) for role in roles}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{role!r} has {count}" for role, count in lengths.items())
        raise PairingError(
            f"ZIP pairing needs the same number of artifacts in every input role, but {listed}; "
            "fix: give every role the same number of artifacts, or use "
            "group_by=CROSS_PRODUCT (every combination) or LINEAGE (by shared ancestry)"
        )
    columns = [inputs[role] for role in roles]
    return (
        PairedGroup.of(dict(zip(roles, row, strict=True))) for row in zip(*columns, strict=True)
    )


def _lineage(
    inputs: Mapping[str, Sequence[str]], roles: list[str], ancestry: Ancestry
) -> Iterable[PairedGroup]:
    if len(roles) != 2:
        raise PairingError(
            f"LINEAGE pairing needs exactly two input roles, got {len(roles)}: {roles}; "
            "fix: pair two roles, or name a primary role with anchor= to match every other "
            "role against it"
        )
    first, second = roles
    lookup = _AncestorIndex(_memoized(ancestry), inputs[second])
    for artifact_id in sorted(set(inputs[first])):
        for partner in lookup.sharing(artifact_id):
            yield PairedGroup.of({first: artifact_id, second: partner})


def _by_anchor(
    inputs: Mapping[str, Sequence[str]],
    roles: list[str],
    group_by: GroupBy | None,
    anchor: str,
    ancestry: Ancestry | None,
) -> Iterable[PairedGroup]:
    if anchor not in inputs:
        raise PairingError(
            f"anchor role {anchor!r} is not an input role; the input roles are {roles}"
        )
    if group_by not in (None, GroupBy.LINEAGE):
        raise PairingError(
            f"anchor matching pairs by shared ancestry and cannot be combined with "
            f"group_by={group_by}; fix: use group_by=LINEAGE or None with anchor={anchor!r}"
        )
    others = [role for role in roles if role != anchor]
    known = _memoized(_require(ancestry, "anchor matching"))
    lookups = {role: _AncestorIndex(known, inputs[role]) for role in others}
    for artifact_id in sorted(set(inputs[anchor])):
        matches = [lookups[role].sharing(artifact_id) for role in others]
        for combination in itertools.product(*matches):
            yield PairedGroup.of(
                {anchor: artifact_id, **dict(zip(others, combination, strict=True))}
            )


class _AncestorIndex:
    """The artifacts of one role, indexed by ancestor, so a lookup never scans the role."""

    def __init__(self, ancestry: Ancestry, artifact_ids: Iterable[str]) -> None:
        self._ancestry = ancestry
        self._by_ancestor: dict[str, set[str]] = {}
        for artifact_id in artifact_ids:
            for ancestor in ancestry(artifact_id):
                self._by_ancestor.setdefault(ancestor, set()).add(artifact_id)

    def sharing(self, artifact_id: str) -> list[str]:
        """The indexed artifacts sharing at least one ancestor with ``artifact_id``, sorted."""
        found: set[str] = set()
        for ancestor in self._ancestry(artifact_id):
            found |= self._by_ancestor.get(ancestor, set())
        return sorted(found)


def _require(ancestry: Ancestry | None, what: str) -> Ancestry:
    if ancestry is None:
        raise PairingError(
            f"{what} needs ancestry= (each artifact's ancestors, itself included); "
            "fix: pass the store's ancestry lookup, or use group_by=ZIP or CROSS_PRODUCT"
        )
    return ancestry


def _memoized(ancestry: Ancestry) -> Ancestry:
    """Ask ``ancestry`` once per artifact: it may be a store query."""
    cache: dict[str, frozenset[str]] = {}

    def lookup(artifact_id: str) -> frozenset[str]:
        found = cache.get(artifact_id)
        if found is None:
            found = cache[artifact_id] = ancestry(artifact_id)
        return found

    return lookup


def _dedupe(groups: Iterable[PairedGroup]) -> list[PairedGroup]:
    return list({group.group_id: group for group in groups}.values())
