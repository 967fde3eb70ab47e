"""``ExecutionUnit``: the sealed package of work a worker receives; ``UnitTally``: what came back.

It carries the fully configured operation instance (not a class reference), the unit's input
artifact ids per role (from pairing and batching), its execution key, and where the store is.
Workers load input content from the store, run the lifecycle, and stage one bundle.

Both classes use ``__slots__``: a step holds one unit (and its groups) per execution until it is
dispatched, so a per-instance ``__dict__`` is the orchestrator's memory growing with N.
For the same reason a step folds its outcomes into a :class:`UnitTally` as they come back
instead of keeping them until its commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.operations.definition import OperationDefinition

if TYPE_CHECKING:
    from stemma.core.pipeline.worker_entry import UnitOutcome


@dataclass(frozen=True, kw_only=True, slots=True)
class UnitGroup:
    """One paired group of inputs inside a unit."""

    group_id: str | None
    """The pairing group id (shared by its co-input lineage edges); None when unpaired."""
    inputs: Mapping[str, tuple[str, ...]]
    """Per input role, the group's artifact ids."""


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

    def inputs(self) -> dict[str, tuple[str, ...]]:
        """Per role, every input artifact id of the unit, in group order, deduplicated."""
        merged: dict[str, list[str]] = {}
        for group in self.groups:
            for role, ids in group.inputs.items():
                bucket = merged.setdefault(role, [])
                bucket.extend(i for i in ids if i not in bucket)
        return {role: tuple(ids) for role, ids in merged.items()}


@dataclass(kw_only=True, slots=True)
class UnitTally:
    """What a step's units came to: the figures its commit and final event need, and no unit."""

    expected: int
    """Units the step planned (cached ones included)."""
    cached: int = 0
    """Units answered by the execution cache."""
    returned: int = 0
    """Outcomes back from the backend."""
    cancelled: int = 0
    """Of those, units a cancellation stopped."""
    failed_any: bool = False
    """Some outcome was not a success (``fail_fast`` stops dispatching)."""
    first_error: str | None = None
    """The first failed (not cancelled) unit's error."""
    outputs: dict[str, set[str]] = field(default_factory=dict[str, set[str]])
    """Per output role, the ids of cached and successful units."""
    bundles: dict[Path, None] = field(default_factory=dict[Path, None])
    """The staged bundles to commit, once each, in the order they came back."""
    successes: dict[Path | None, int] = field(default_factory=dict[Path | None, int])
    """Successful units per bundle: a bundle the commit leaves out fails its units."""

    def add_cached(self, outputs: Mapping[str, Iterable[str]]) -> None:
        """Count an execution-cache hit and keep its outputs."""
        self.cached += 1
        self._keep(outputs)

    def add(self, outcomes: Iterable[UnitOutcome]) -> None:
        """Fold outcomes from the backend in; the caller can drop them."""
        for outcome in outcomes:
            self.returned += 1
            if outcome.bundle is not None:
                self.bundles.setdefault(outcome.bundle)
            if outcome.success:
                self.successes[outcome.bundle] = self.successes.get(outcome.bundle, 0) + 1
                self._keep(outcome.outputs)
                continue
            self.failed_any = True
            if outcome.cancelled:
                self.cancelled += 1
            elif self.first_error is None and outcome.error:
                self.first_error = outcome.error

    def landed(self, *, lost: Iterable[Path | None]) -> int:
        """Successful units whose bundle the commit took (not in ``lost``)."""
        left_out = set(lost)
        return sum(n for bundle, n in self.successes.items() if bundle not in left_out)

    def _keep(self, outputs: Mapping[str, Iterable[str]]) -> None:
        for role, ids in outputs.items():
            self.outputs.setdefault(role, set()).update(ids)
