"""Two-level batching: paired groups into execution units, units into worker jobs.

Batching is packaging only. Keys are computed per paired group before any of this runs, so
changing ``artifacts_per_unit``, ``max_artifacts_per_unit`` or ``units_per_worker`` never
changes a key and never causes a rerun. Both levels keep the order they are given, so the same
groups and settings always give the same units.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

from stemma.core.errors import BatchingError
from stemma.core.operations.pairing import PairedGroup, group_id_of

Unit = tuple[PairedGroup, ...]
"""The paired groups one execution processes."""

_T = TypeVar("_T")
_G = TypeVar("_G")


def make_units(
    groups: Iterable[PairedGroup],
    artifacts_per_unit: int,
    max_artifacts_per_unit: int | None = None,
) -> list[Unit]:
    """Level 1: pack paired groups, in order, into execution units.

    A group counts as its number of members and is never split. Groups are added to a unit
    until it holds at least ``artifacts_per_unit`` artifacts (a target: a group larger than it
    gets a unit of its own) while the unit stays within ``max_artifacts_per_unit`` (a hard cap).

    Args:
        groups: the paired groups to process, in a deterministic order.
        artifacts_per_unit: how many artifacts a unit should hold, at least 1.
        max_artifacts_per_unit: how many artifacts a unit may hold at most; None for no cap.

    Returns:
        The units, each a non-empty tuple of groups; empty when there are no groups.

    Raises:
        BatchingError: a setting below 1, a cap below the target, or a group with more
            members than the cap allows.
    """
    return list(iter_units(groups, artifacts_per_unit, max_artifacts_per_unit))


def iter_units(
    groups: Iterable[PairedGroup],
    artifacts_per_unit: int,
    max_artifacts_per_unit: int | None = None,
) -> Iterator[Unit]:
    """:func:`make_units` one unit at a time, holding only the unit being filled.

    Raises:
        BatchingError: a bad setting at once; a group larger than the cap when it is reached.
    """
    packs = _packs(groups, _members_of_group, artifacts_per_unit, max_artifacts_per_unit)
    return map(tuple, packs)


def count_units(
    rows: Iterable[Mapping[str, str]],
    artifacts_per_unit: int,
    max_artifacts_per_unit: int | None = None,
) -> int:
    """How many units :func:`make_units` makes of the groups with these members, exactly.

    Takes the groups' members (``pairing.member_rows``), not the groups: counting a step's units
    costs no group id, and holds one unit at a time.

    Raises:
        BatchingError: as :func:`make_units`.
    """
    packs = _packs(rows, _members_of_row, artifacts_per_unit, max_artifacts_per_unit)
    return sum(1 for _ in packs)


def _packs(
    items: Iterable[_G],
    members_of: Callable[[_G], Mapping[str, str]],
    artifacts_per_unit: int,
    max_artifacts_per_unit: int | None,
) -> Iterator[list[_G]]:
    """The packing both :func:`iter_units` and :func:`count_units` do (settings checked first)."""
    _require_positive("artifacts_per_unit", artifacts_per_unit)
    cap = max_artifacts_per_unit
    if cap is not None:
        _require_positive("max_artifacts_per_unit", cap)
        if cap < artifacts_per_unit:
            raise BatchingError(
                f"max_artifacts_per_unit={cap} is below artifacts_per_unit="
                f"{artifacts_per_unit}; fix: raise the cap or lower the target"
            )
    return _packed(items, members_of, artifacts_per_unit, cap)


def _packed(
    items: Iterable[_G],
    members_of: Callable[[_G], Mapping[str, str]],
    target: int,
    cap: int | None,
) -> Iterator[list[_G]]:
    current: list[_G] = []
    count = 0
    for item in items:
        size = len(members_of(item))
        if cap is not None and size > cap:
            members = members_of(item)
            raise BatchingError(
                f"paired group {group_id_of(members)} has {size} artifacts "
                f"({', '.join(sorted(members))}) but max_artifacts_per_unit={cap}, "
                f"and a group is never split; fix: set max_artifacts_per_unit to at least {size}"
            )
        if current and cap is not None and count + size > cap:
            yield current
            current, count = [], 0
        current.append(item)
        count += size
        if count >= target:
            yield current
            current, count = [], 0
    if current:
        yield current


def _members_of_group(group: PairedGroup) -> Mapping[str, str]:
    return group.members


def _members_of_row(row: Mapping[str, str]) -> Mapping[str, str]:
    return row


def pack_workers(units: Sequence[_T], units_per_worker: int) -> list[list[_T]]:
    """Level 2: pack execution units, in order, into worker jobs of ``units_per_worker`` each.

    Args:
        units: the units to run (the cache misses), in a deterministic order.
        units_per_worker: how many units one worker job (one SLURM array element) runs.

    Returns:
        The jobs, every one full except possibly the last; empty when there are no units.

    Raises:
        BatchingError: ``units_per_worker`` is below 1.
    """
    _require_positive("units_per_worker", units_per_worker)
    return [
        list(units[start : start + units_per_worker])
        for start in range(0, len(units), units_per_worker)
    ]


def _require_positive(name: str, value: int) -> None:
    if value < 1:
        raise BatchingError(f"{name} must be at least 1, got {value}")
