"""``UnitCounts``: the one definition of a step's unit counts, for every view of a step.

``StepResult``, the steps event log, the live state (``runs/{id}/state.json``), ``stemma
status``/``watch`` and the dashboard all count a step's units this way (docs/reference/cli.md):

- ``total``: every unit the step has, whatever became of it (cache hits and cancelled units
  included), known once its inputs are resolved;
- ``succeeded``: units whose outputs the step has, run and succeeded or answered by the
  execution cache (so a rerun answered wholly by the cache reports every unit succeeded);
- ``cached``: of those, the ones the cache answered (a step-level hit: all of them);
- ``failed``: units that ran and failed, or whose staged result could not be committed;
- ``cancelled``: units that never ran to an end because the step stopped first (a cancel, a
  ``fail_fast`` failure, a dispatch failure, an orchestrator that died);
- ``running``: units handed to a worker and not back yet (live views only; 0 once final).

So ``succeeded + failed + cancelled + running + pending == total``, and a finished step has
nothing running or pending. A step skipped as a whole made no units: all counts 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # An annotation only: reading a state file (the dashboard's first frame) needs no
    # execution records (~7 ms of imports).
    from stemma.core.execution_records import StepEvent

CANCELLED_KEY = "cancelled_units"
"""The step event's metadata key for ``cancelled`` (the event log has no column for it)."""
CACHED_KEY = "execution_cache_hits"
"""The step event's metadata key for ``cached`` on a step that ran."""


@dataclass(frozen=True, kw_only=True)
class UnitCounts:
    """A step's units, counted once (see the module docstring for each count's meaning)."""

    total: int = 0
    """Every unit the step has: cached, succeeded, failed, cancelled, running and pending."""
    succeeded: int = 0
    """Units whose outputs the step has: run and succeeded, or answered by the cache."""
    cached: int = 0
    """Of ``succeeded``, the units the execution cache (or a step-level hit) answered."""
    failed: int = 0
    """Units that ran and failed, or whose staged result the commit had to leave out."""
    cancelled: int = 0
    """Units that never ran to an end because the step stopped first."""
    running: int = 0
    """Units handed to a worker and not back yet (0 once the step is final)."""

    @property
    def done(self) -> int:
        """Units finished one way or another: succeeded, failed or cancelled."""
        return self.succeeded + self.failed + self.cancelled

    @property
    def pending(self) -> int:
        """Units neither finished nor running yet."""
        return max(0, self.total - self.done - self.running)

    @property
    def executed(self) -> int:
        """Units a worker spent time on (cache hits cost nothing): what paces an ETA."""
        return self.succeeded - self.cached + self.failed

    def settled(self) -> UnitCounts:
        """These counts once the step is over: what was running or pending is cancelled."""
        return UnitCounts(
            total=max(self.total, self.done + self.running),
            succeeded=self.succeeded,
            cached=self.cached,
            failed=self.failed,
            cancelled=self.cancelled + self.running + self.pending,
        )

    def event_metadata(self) -> dict[str, int]:
        """What the step event log keeps in ``metadata`` (it has columns for the rest)."""
        return {CACHED_KEY: self.cached, CANCELLED_KEY: self.cancelled}

    @classmethod
    def of_event(cls, event: StepEvent) -> UnitCounts:
        """The counts a step event records.

        Events written before ``total`` counted cancelled units (``total_count`` was then
        ``succeeded + failed``) read the same way: ``total`` is never less than its parts.
        """
        metadata: Mapping[str, Any] = event.metadata
        step_hit = metadata.get("cache") == "step"
        cached = event.succeeded_count if step_hit else _count(metadata.get(CACHED_KEY))
        cancelled = _count(metadata.get(CANCELLED_KEY))
        done = event.succeeded_count + event.failed_count + cancelled
        return cls(
            total=max(event.total_count, done),
            succeeded=event.succeeded_count,
            cached=min(cached, event.succeeded_count),
            failed=event.failed_count,
            cancelled=cancelled,
        )


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0
