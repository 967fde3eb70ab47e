"""``ExecutionUnit``: the sealed package of work a worker receives.

It carries the fully configured operation instance (not a class reference), the unit's input
artifact ids per role (from pairing and batching), its execution key, and where the store is.
Workers load input content from the store, run the lifecycle, and stage one bundle.

Both classes use ``__slots__``: a step holds one unit (and its groups) per execution until it is
dispatched, so a per-instance ``__dict__`` is the orchestrator's memory growing with N.
For the same reason a step folds its outcomes into a ``UnitTally`` (``unit_tally.py``) as they
come back instead of keeping them until its commit.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.store.failure_logs import write_failure_log

_C = TypeVar("_C")


def _pickled_by_fields(cls: type[_C]) -> type[_C]:
    """Give a frozen slotted dataclass a pickled state of its field values, in field order.

    Every unit crosses to its worker pickled, and the state ``dataclass(slots=True)`` writes
    calls ``dataclasses.fields()`` for each instance both ways: three quarters of pickling a
    unit (benchmarks/README.md, "issue 34"). The names are read once here instead; the state
    is the same list of values, so either side reads the other's.
    """
    names = tuple(f.name for f in fields(cls))  # pyright: ignore[reportArgumentType]
    values = operator.attrgetter(*names)

    def getstate(self: _C) -> list[Any]:
        return list(values(self))

    def setstate(self: _C, state: Sequence[Any]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)

    cls.__getstate__ = getstate  # pyright: ignore[reportAttributeAccessIssue]
    cls.__setstate__ = setstate  # pyright: ignore[reportAttributeAccessIssue]
    return cls


@_pickled_by_fields
@dataclass(frozen=True, kw_only=True, slots=True)
class UnitGroup:
    """One paired group of inputs inside a unit."""

    group_id: str | None
    """The pairing group id (shared by its co-input lineage edges); None when unpaired."""
    inputs: Mapping[str, tuple[str, ...]]
    """Per input role, the group's artifact ids."""


@_pickled_by_fields
@dataclass(frozen=True, kw_only=True, slots=True)
class ExecutionUnit:
    """Everything a worker needs to run one batch of one step."""

    operation: OperationDefinition
    """The configured instance: params, resources, execution, overrides."""
    step_run_id: str
    step_spec_id: str
    step_name: str
    step_number: int
    version: str
    execution_spec_id: str
    """The unit's execution key (cache level 2)."""
    groups: tuple[UnitGroup, ...]
    """The paired groups of the unit, in pairing order."""
    root: str
    """The store root, as an absolute path."""
    backend: str
    """The backend's name, recorded in the execution row."""
    preserve_working: bool = False
    """Keep the sandbox after the unit finishes."""
    provenance: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The pipeline's provenance (git commit, user, host, time, command line)."""
    store_kind: str | None = None
    """The orchestrator's store (``delta``, ``sqlite``): the worker stages into the same kind.
    None: the default kind where the worker runs."""
    fail_fast_file: str | None = None
    """Under ``fail_fast``: the file whose existence says a unit of the step has failed. A
    worker starts no unit once it exists, and creates it when one of its units fails, so the
    step's other packs stop without waiting for the orchestrator. Never part of a key."""
    input_rows: Mapping[str, FinalizedArtifact] | None = None
    """The unit's input artifacts by id, read by the orchestrator for a whole window of units
    (``engine/dispatch/input_rows.py``) so the worker reads nothing from the store for them:
    without content when no role of the unit hydrates, with it when one does and every input is
    small. None: the worker reads them. Never part of a key."""

    def inputs(self) -> dict[str, tuple[str, ...]]:
        """Per role, every input artifact id of the unit, in group order, deduplicated."""
        merged: dict[str, list[str]] = {}
        for group in self.groups:
            for role, ids in group.inputs.items():
                bucket = merged.setdefault(role, [])
                bucket.extend(i for i in ids if i not in bucket)
        return {role: tuple(ids) for role, ids in merged.items()}


def unit_failure_log(unit: ExecutionUnit, record: ExecutionRecord) -> Path | None:
    """Write the failure log of ``unit``'s failed ``record`` (its error and tool output)."""
    return write_failure_log(
        Path(unit.root),
        step_number=unit.step_number,
        operation=record.operation,
        execution_run_id=record.execution_run_id,
        backend=unit.backend,
        error=record.error or "(no error message)",
        tool_output=record.tool_output,
        when=record.ended_at,
    )
