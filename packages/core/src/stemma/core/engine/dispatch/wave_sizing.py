"""How many units each element of a whole-wave submission (a SLURM job array) runs.

A backend that queues whole waves has every pack submitted before any comes back, so it cannot
size packs as they return, as the local backend does (``pack_sizing``). Left at one unit per
element, 10,000 short units became 10,000 scheduler jobs: the pattern cluster admins forbid.
So, when the operation leaves ``units_per_worker`` unset:

- **with history**, each element holds ``element_seconds`` of work (three minutes unless the
  operation's ``Execution.element_seconds`` says otherwise) at the recorded mean seconds per
  unit of this step (same fingerprint) or, failing that, of the newest completed step of the
  same operation; but the wave is cut in at least as many elements as run at once (the step's
  ``max_workers``, else the pipeline's, else 8), so short units still run in parallel; never
  more than half the operation's time limit of work, so a slow element still ends in time;
  and at least enough units per element that the wave fits in one array of the backend's most
  elements (``MaxArraySize``), unless that would break the time limit;
- **without history**, a step of at least ``PROBE_FROM_UNITS`` (256) units to run sends a first
  wave of a few units, one per element, as a probe: once it is back, the rest is sized from
  what it took, in one more submission; a smaller step goes out one unit per element.

The seconds per unit are the units' own lifecycle time, as their workers measured it
(``UnitOutcome.seconds``), recorded as ``unit_seconds`` in each step's final event.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from stemma.core.backends.base import Backend
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.run_context import RunContext
from stemma.core.engine.worker.worker_entry import UnitOutcome
from stemma.core.execution_records import StepEvent
from stemma.core.operations.time_limits import time_limit_seconds

_T = TypeVar("_T")

TIME_LIMIT_SHARE = 0.5
"""An element's planned work stays under this share of the operation's time limit."""
PROBE_UNITS = 4
"""The units (one per element) of a first wave without history."""
PROBE_FROM_UNITS = 256
"""Without history, only a step of at least this many units to run is probed first: the probe
holds the rest back until it is done (one unit's time, and a queue wait), worth it to spare a
cluster hundreds of tiny jobs, not for a step of a few dozen units, which go out one unit per
element at once as before."""
DEFAULT_SPREAD = 8
"""A wave is spread over at least this many elements (when it has the units) unless the step's
``max_workers`` (or the pipeline's) says how many run at once: a step of short units still runs
in parallel rather than in one element."""


def recorded_unit_seconds(
    completed: Mapping[str, StepEvent], fingerprint: str | None, operation: str
) -> float | None:
    """Mean seconds per unit of the step's earlier runs; None without a record.

    The same fingerprint first, else the newest completed step of the same operation.

    Args:
        completed: the store's completed steps by fingerprint.
        fingerprint: this step's fingerprint (None for a step not yet keyed).
        operation: the operation's name.
    """
    same = completed.get(fingerprint) if fingerprint is not None else None
    found = unit_seconds_of(same)
    if found is not None:
        return found
    runs = [e for e in completed.values() if e.operation == operation and unit_seconds_of(e)]
    newest = max(runs, key=lambda e: e.timestamp, default=None)
    return unit_seconds_of(newest)


def units_per_element(
    units: int,
    unit_seconds: float,
    *,
    element_seconds: float,
    time_limit_seconds: float,
    max_elements: int | None,
    spread: int = DEFAULT_SPREAD,
) -> int:
    """The units one element runs so that ``units`` units make a wave of sensible elements.

    Args:
        units: the units to submit.
        unit_seconds: the expected seconds of one unit (history, or the probe).
        element_seconds: the work an element aims at.
        time_limit_seconds: the operation's time limit (an element must end within it).
        max_elements: the most elements one array may have (None: no limit).
        spread: the elements that run at once: a wave is cut in at least that many.
    """
    if units < 1:
        return 1
    per_unit = max(unit_seconds, 1e-3)
    ceiling = max(1, math.floor(time_limit_seconds * TIME_LIMIT_SHARE / per_unit))
    wanted = max(1, math.floor(element_seconds / per_unit))
    wanted = min(wanted, math.ceil(units / max(1, spread)))  # every worker gets some
    if max_elements is not None and max_elements > 0:
        wanted = max(wanted, math.ceil(units / max_elements))  # one array, if time allows
    return max(1, min(wanted, ceiling, units))


def unit_seconds_of(event: StepEvent | None) -> float | None:
    """The mean seconds per unit a step's final event recorded; None without one."""
    if event is None:
        return None
    value = event.metadata.get("unit_seconds")
    return float(value) if isinstance(value, int | float) and value > 0 else None


@dataclass(kw_only=True)
class WaveSizer:
    """One step's element sizes on a whole-wave backend: from history, or from a probe wave."""

    unit_seconds: float | None
    """Expected seconds per unit; None until history or the probe says."""
    probe: bool = True
    """Without history, send a probe first; False: one unit per element (a small step)."""
    element_seconds: float
    time_limit_seconds: float
    max_elements: int | None
    spread: int = DEFAULT_SPREAD

    @property
    def probing(self) -> bool:
        """No record yet: the next wave is a probe of a few units."""
        return self.unit_seconds is None and self.probe

    def window(self) -> int | None:
        """How many units the next submission takes (None: every unit left)."""
        return PROBE_UNITS if self.probing else None

    def per_element(self, units: int) -> int:
        """The units per element for a wave of ``units`` (one while probing)."""
        if self.unit_seconds is None:
            return 1
        return units_per_element(
            units,
            self.unit_seconds,
            element_seconds=self.element_seconds,
            time_limit_seconds=self.time_limit_seconds,
            max_elements=self.max_elements,
            spread=self.spread,
        )

    def learn(self, outcomes: Iterable[UnitOutcome]) -> None:
        """A wave came back: its successful units' seconds set the pace, if nothing else did.

        (A unit that failed at once says nothing of how long one that works takes.)
        """
        if self.unit_seconds is not None:
            return
        seconds = [o.seconds for o in outcomes if o.success and o.seconds > 0]
        if seconds:
            self.unit_seconds = sum(seconds) / len(seconds)
        else:  # the probe told nothing (cancelled, all failed): one unit per element, no more
            self.probe = False


def wave_sizer(
    ctx: RunContext,
    step: PlannedStep,
    backend: Backend,
    misses: Iterator[_T],
    to_run: Callable[[], int],
) -> tuple[Iterator[_T], WaveSizer | None]:
    """The step's units to run, and their element sizing on a whole-wave backend.

    ``to_run`` says how many units the cache did not answer, once the first is known.

    None for other backends, when the operation sets ``units_per_worker``, or when every unit
    was a cache hit: nothing is read (the steps table, the cluster's ``MaxArraySize``) for a
    step that submits nothing.
    """
    op = step.operation
    if not backend.queues_whole_waves or op.execution.units_per_worker is not None:
        return misses, None
    first = next(misses, None)
    if first is None:
        return misses, None
    if ctx.step_index is None:  # read once per run, as the step cache does
        ctx.step_index = ctx.store.completed_steps()
    largest: Callable[[], int] | None = getattr(backend, "max_elements", None)
    sizer = WaveSizer(
        unit_seconds=recorded_unit_seconds(ctx.step_index, step.fingerprint, str(op.name)),
        element_seconds=op.execution.element_seconds,
        time_limit_seconds=time_limit_seconds(op.resources.time_limit),
        max_elements=largest() if callable(largest) else None,
        spread=op.execution.max_workers or ctx.max_workers or DEFAULT_SPREAD,
        probe=to_run() >= PROBE_FROM_UNITS,
    )
    return itertools.chain([first], misses), sizer
