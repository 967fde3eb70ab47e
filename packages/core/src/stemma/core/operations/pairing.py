"""Pairing: align the artifacts of several input roles into the groups one execution consumes.

Pairing runs before batching, so a batch never splits a group, and each group carries an id that
depends only on its members: the co-input lineage edges of a group share it, in every run and
whatever the batching. Everything here is pure; ancestry comes in through a callback.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from stemma.core.canonical import json_string
from stemma.core.errors import PairingError
from stemma.core.identity import hash_encoded

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
    """Return the id of a paired group: a tagged xxh3_128 over its sorted (role, id) members.

    The text hashed is, byte for byte, the canonical JSON of ``["paired_group", [[role, id],
    ...]]``, written by hand: a step makes one group per artifact, and json's encoder costs
    more than the hash for a value this small.
    """
    pairs = ",".join(
        f"[{json_string(role)},{json_string(members[role])}]" for role in sorted(members)
    )
    return hash_encoded(f'["{_GROUP_KIND}",[{pairs}]]')


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
    return list(iter_pairs(inputs, group_by, ancestry=ancestry, anchor=anchor))


def iter_pairs(
    inputs: Mapping[str, Sequence[str]],
    group_by: GroupBy | None,
    *,
    ancestry: Ancestry | None = None,
    anchor: str | None = None,
) -> Iterator[PairedGroup]:
    """:func:`pair_inputs` one group at a time: a step never holds all of its groups.

    Raises:
        PairingError: as :func:`pair_inputs`, at the latest when the first group is asked for.
    """
    return map(PairedGroup.of, member_rows(inputs, group_by, ancestry=ancestry, anchor=anchor))


def member_rows(
    inputs: Mapping[str, Sequence[str]],
    group_by: GroupBy | None,
    *,
    ancestry: Ancestry | None = None,
    anchor: str | None = None,
) -> Iterator[dict[str, str]]:
    """The members (``{role: artifact id}``) of each group :func:`iter_pairs` makes, in order.

    Without the group ids, which cost a hash each: counting a step's groups is cheap.

    Raises:
        PairingError: as :func:`pair_inputs`, at the latest when the first row is asked for.
    """
    roles = sorted(inputs)
    rows: Iterator[dict[str, str]]
    if anchor is not None:
        rows = _by_anchor(inputs, roles, group_by, anchor, ancestry)
    elif group_by is None or len(roles) <= 1:
        rows = ({role: artifact_id} for role in roles for artifact_id in sorted(inputs[role]))
    elif group_by is GroupBy.ZIP:
        rows = _zip(inputs, roles)
    elif group_by is GroupBy.CROSS_PRODUCT:
        columns = [sorted(inputs[role]) for role in roles]
        rows = (
            dict(zip(roles, combination, strict=True))
            for combination in itertools.product(*columns)
        )
    else:
        rows = _lineage(inputs, roles, _require(ancestry, "LINEAGE pairing"))
    # Only a repeated id can repeat a group: without one, no set of every group is kept.
    repeats = any(len(set(ids)) < len(ids) for ids in inputs.values())
    return _dedupe(rows) if repeats else rows


def _zip(inputs: Mapping[str, Sequence[str]], roles: list[str]) -> Iterator[dict[str, str]]:
    lengths = {role: len(inputs[role]) for role in roles}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{role!r} has {count}" for role, count in lengths.items())
        raise PairingError(
            f"ZIP pairing needs the same number of artifacts in every input role, but {listed}; "
            "fix: give every role the same number of artifacts, or use "
            "group_by=CROSS_PRODUCT (every combination) or LINEAGE (by shared ancestry)"
        )
    columns = [inputs[role] for role in roles]
    return (dict(zip(roles, row, strict=True)) for row in zip(*columns, strict=True))


def _lineage(
    inputs: Mapping[str, Sequence[str]], roles: list[str], ancestry: Ancestry
) -> Iterator[dict[str, str]]:
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
            yield {first: artifact_id, second: partner}


def _by_anchor(
    inputs: Mapping[str, Sequence[str]],
    roles: list[str],
    group_by: GroupBy | None,
    anchor: str,
    ancestry: Ancestry | None,
) -> Iterator[dict[str, str]]:
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
            yield {anchor: artifact_id, **dict(zip(others, combination, strict=True))}


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


def _dedupe(rows: Iterable[dict[str, str]]) -> Iterator[dict[str, str]]:
    """Each row once, where it first comes (rows of one pairing list their roles alike)."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    for row in rows:
        members = tuple(row.items())
        if members not in seen:
            seen.add(members)
            yield row
