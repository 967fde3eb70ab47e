"""``RunContext``: what every step of one pipeline run shares, across its step threads."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from stemma.core.backends.base import Backend
from stemma.core.cancel_levels import CancelLevel
from stemma.core.engine.planned_step import CachePolicy, PlannedStep
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.engine.worker.worker_entry import UnitOutcome
from stemma.core.engine.worker_slots import WorkerSlots
from stemma.core.execution_records import StepEvent
from stemma.core.live.monitor import RunMonitor
from stemma.core.records import StepStatus
from stemma.core.store.protocols import RunStore

if TYPE_CHECKING:
    from stemma.core.engine.commit.group_commit import GroupCommit
    from stemma.core.live.state import StepState


class FunctionUnits(Protocol):
    """Where function steps hand their one unit (``function_packs.FunctionPacks``)."""

    def submit(self, step: PlannedStep, unit: ExecutionUnit) -> Future[UnitOutcome]:
        """Queue ``unit`` of ``step``; the future settles with its outcome, never fails."""
        ...


class _NoFunctionUnits:
    def submit(self, step: PlannedStep, unit: ExecutionUnit) -> Future[UnitOutcome]:
        raise RuntimeError(f"step {step.name!r}: function steps need an EngineRun to run them")


@dataclass(kw_only=True)
class RunContext:
    """What every step of one pipeline run shares."""

    store: RunStore
    backend: Backend
    run_id: str
    steps: dict[int, PlannedStep]
    """Every step of the run by number (restored ones included, after a resume)."""
    cache_policy: CachePolicy
    preserve_working: bool
    provenance: Mapping[str, Any]
    monitor: RunMonitor
    """Live per-step counts, for the run's state file."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    """Set at any cancellation level: nothing new is dispatched."""
    cancel_level: int = 0
    """The highest cancellation level applied (0: none); at 2 and above, units whose workers
    die are recorded as cancelled, not crashed."""
    side_backends: list[Backend] = field(default_factory=list[Backend])
    """Backends opened beside the run's for a while (a curator step's subprocess): a cancel
    stops their workers too."""
    halted_by: int | None = None
    """The number of the step whose failure under ``fail_fast`` halted the run: no later step
    starts, and the ``Pipeline`` raises."""
    commit_lock: threading.Lock = field(default_factory=threading.Lock)
    """Commits are serialized in the orchestrator."""
    deferred_events: list[StepEvent] = field(default_factory=list[StepEvent])
    """Events of step-level cache hits, written with the next commit (one write, not one each)."""
    worker_slots: WorkerSlots = field(default_factory=lambda: WorkerSlots(1))
    """Packs in flight across all the run's steps, at most one per worker (set from the
    backend's size when the run opens)."""
    group_commit: GroupCommit | None = None
    """Commits function steps finishing together as one wave and one event write; made on
    first use (``group_commit_of``), by the commit room, which the context does not import."""
    recovered_at: float = 0.0
    """When the run's recovery of the store began (Unix time; 0: not known): a scheduler
    adopts a dead run's element that finished after it (``WaveRequest.recovered_at``)."""
    max_workers: int | None = None
    """The workers the run asked for (None: the backend's default); on a scheduler, the most
    elements a wave of function steps is cut into."""
    function_units: FunctionUnits = field(default_factory=_NoFunctionUnits)
    """Packs function steps' units across steps (set by the run's ``EngineRun``)."""
    step_index: dict[str, StepEvent] | None = None
    """The store's completed steps by fingerprint, read once; a miss asks the store again."""
    pack_sizes: dict[str, int] = field(default_factory=dict[str, int])
    """The pack size each operation's last sized step of this run ended with, by operation
    name: its next step starts there instead of at one unit (``dispatch.pack_sizing``)."""
    open_attempts: dict[str, tuple[int, Callable[..., StepEvent]]] = field(
        default_factory=dict[str, tuple[int, Callable[..., StepEvent]]]
    )
    """Step attempts whose ``running`` event is out (or deferred) and whose final event is not,
    by step run id: their step's number and event factory. What a hard cancel closes."""
    closed_attempts: set[str] = field(default_factory=set[str])
    """Attempts a hard cancel wrote final: their own final event, coming late, is not written."""

    def cancel_workers(self, level: CancelLevel) -> None:
        """Stop the run's workers at ``level``: its backend's, and those beside it.

        (A curator step's own subprocess, ``curator_workers``.)
        """
        for backend in [self.backend, *self.side_backends]:
            backend.cancel(level)

    def oldest_deferred(self) -> dt.datetime | None:
        """When the oldest deferred event happened (None: nothing is deferred)."""
        with self.commit_lock:
            return min((e.timestamp for e in self.deferred_events), default=None)

    def opened(self, step_run_id: str, number: int, event: Callable[..., StepEvent]) -> None:
        """Step ``number``'s attempt ``step_run_id`` is under way (its ``running`` event out)."""
        with self.commit_lock:
            self.open_attempts[step_run_id] = (number, event)

    def record(
        self, events: Sequence[StepEvent], *, then: Callable[[], None] | None = None
    ) -> None:
        """Write ``events`` and everything deferred, in one append (holds the commit lock).

        ``then`` runs under the same lock once they are written: a step tells the live monitor
        its final counts there, so a hard cancel, which snapshots the live state under that
        lock, sees a step either still open (and writes its final event itself) or finished
        with the counts its event has, never one without the other. Nor does ``then`` run for a
        step whose attempt the hard cancel closed first: the live state it wrote says cancelled,
        as the tables do, and a step finishing behind it must not turn that into completed.
        """
        with self.commit_lock:
            # A hard cancel that took the lock first closed this attempt as cancelled, in the
            # tables and the live state alike: the step's own end is said by neither.
            overtaken = any(self._closed(e) for e in events)
            batch = [*self.deferred_events, *events]
            batch = [e for e in batch if not self._closed(e)]
            if batch:
                self.store.record_events(batch)
            self.deferred_events.clear()  # only once written: a failed write keeps them
            for event in batch:
                if event.status is not StepStatus.RUNNING:
                    self.open_attempts.pop(event.step_run_id, None)
            if then is not None and not overtaken:
                then()

    def close_cancelled(self, steps: Mapping[int, StepState]) -> None:
        """Write a ``cancelled`` final event for every open attempt (call with the commit lock).

        A hard cancel ends the process within seconds: a stopped step's thread may never
        write its own final event, which would leave its ``running`` event alone in the log for
        good. Each gets the counts the live state was written final with (``steps``).
        """
        finals = [
            event(StepStatus.CANCELLED, counts=steps[number].counts)
            for number, event in self.open_attempts.values()
            if number in steps
        ]
        self.store.record_events([*self.deferred_events, *finals])
        self.deferred_events.clear()
        self.closed_attempts.update(final.step_run_id for final in finals)
        self.open_attempts.clear()

    def _closed(self, event: StepEvent) -> bool:
        return event.status is not StepStatus.RUNNING and event.step_run_id in self.closed_attempts
