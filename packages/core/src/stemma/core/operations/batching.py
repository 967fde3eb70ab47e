"""Two-level batching: paired groups into execution units, units into worker jobs.

Batching is packaging only. Keys are computed per paired group before any of this runs, so
changing ``artifacts_per_unit``, ``max_artifacts_per_unit`` or ``units_per_worker`` never
changes a key and never causes a rerun. Both levels keep the order they are given, so the same
groups and settings always give the same units.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from stemma.core.errors import BatchingError
from stemma.core.operations.pairing import PairedGroup

Unit = tuple[PairedGroup, ...]
"""The paired groups one execution processes."""

_T = TypeVar("_T")


def make_units(
    groups: Sequence[PairedGroup],
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
    _require_positive("artifacts_per_unit", artifacts_per_unit)
    cap = max_artifacts_per_unit
    if cap is not None:
        _require_positive("max_artifacts_per_unit", cap)
        if cap < artifacts_per_unit:
            raise BatchingError(
                f"max_artifacts_per_unit={cap} is below artifacts_per_unit="
                f"{artifacts_per_unit}; fix: raise the cap or lower the target"
            )
    units: list[Unit] = []
    current: list[PairedGroup] = []
    count = 0
    for group in groups:
        size = len(group.members)
        if cap is not None and size > cap:
            raise BatchingError(
                f"paired group {group.group_id} has {size} artifacts "
                f"({', '.join(sorted(group.members))}) but max_artifacts_per_unit={cap}, and a "
                f"group is never split; fix: set max_artifacts_per_unit to at least {size}"
            )
        if current and cap is not None and count + size > cap:
            units.append(tuple(current))
            current, count = [], 0
        current.append(group)
        count += size
        if count >= artifacts_per_unit:
            units.append(tuple(current))
            current, count = [], 0
    if current:
        units.append(tuple(current))
    return units


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
