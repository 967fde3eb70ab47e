"""``UnitTally``: what a step's units came to, folded in as they come back.

A step of 10^6 units never holds their outcomes: it keeps the figures its commit and final
event need (counts, the first error, the output ids per role, the bundles to commit) and lets
each outcome go.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from stemma.core.engine.worker.worker_entry import UnitOutcome
from stemma.core.unit_counts import UnitCounts


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
    worked: int = 0
    """Successful units that said how long they ran in their worker."""
    work_seconds: float = 0.0
    """Their seconds, summed: :attr:`unit_seconds` is the mean."""

    @property
    def unit_seconds(self) -> float | None:
        """The mean seconds a unit ran in its worker; None when none said."""
        return self.work_seconds / self.worked if self.worked else None

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
                if outcome.seconds > 0:  # (only successes pace: a quick failure says nothing)
                    self.worked += 1
                    self.work_seconds += outcome.seconds
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

    def counts(self, *, lost: Iterable[Path | None] = ()) -> UnitCounts:
        """The step's final counts (:class:`UnitCounts`), given the bundles its commit left out.

        A unit whose bundle was left out failed; a unit never sent or never back (the step was
        stopped) was cancelled: ``total`` is every unit planned, whatever became of it.
        """
        landed = self.landed(lost=lost)
        failed = self.returned - landed - self.cancelled
        total = max(self.expected, self.cached + self.returned)
        return UnitCounts(
            total=total,
            succeeded=self.cached + landed,
            cached=self.cached,
            failed=failed,
            cancelled=total - self.cached - landed - failed,
        )

    def _keep(self, outputs: Mapping[str, Iterable[str]]) -> None:
        for role, ids in outputs.items():
            self.outputs.setdefault(role, set()).update(ids)
