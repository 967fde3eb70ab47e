"""Settling a run whose orchestrator died: what ``stemma reap`` writes so it stops reading stale.

A dead orchestrator leaves its state file saying ``running`` (readers show ``stale``) and its
steps' newest events saying ``running``. Settling writes what the orchestrator would have
written had it lived to say so: the run final (``cancelled`` when a step never finished), its
running steps ``cancelled`` and its pending ones ``skipped``, with their running and pending
units counted as cancelled; in the state file (with ``reaped_at``) and, for the steps left
``running`` there, as final events in the steps event log.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from stemma.core.errors import StoreUnavailableError
from stemma.core.execution_records import StepEvent
from stemma.core.live import RunState, RunStatus, StepState, write_state
from stemma.core.live.state import FINAL_STEP_STATUSES, utc_now
from stemma.core.records import StepStatus
from stemma.core.runs.run_lookup import history_events
from stemma.core.runs.run_rows import run_name, steps_from_history


@dataclass(frozen=True, kw_only=True)
class Settled:
    """What settling a run changed."""

    state: RunState
    """The run as now written."""
    steps: tuple[StepState, ...]
    """The steps it settled (running, stale or pending ones, and those whose attempt the
    event log still had ``running``), as now written."""
    events: int = 0
    """Final events written to the steps event log."""


def final_status(state: RunState) -> RunStatus:
    """The status a run settles to: ``cancelled`` if a step never finished, else its steps'."""
    statuses = {step.status for step in state.steps}
    if state.cancel_level or not statuses <= FINAL_STEP_STATUSES or "cancelled" in statuses:
        return RunStatus.CANCELLED
    if "failed" in statuses or any(step.failed for step in state.steps):
        return RunStatus.FAILED
    return RunStatus.COMPLETED


def settle_run(root: Path, run_id: str, state: RunState | None) -> Settled | None:
    """Write ``run_id`` as final; None when it had nothing left to settle.

    A run already final in its state file (a hard cancel writes that) may still have steps
    whose newest event says ``running``: their attempts are closed all the same.

    Args:
        root: the stemma root.
        run_id: the run.
        state: its state file as read (None: it has none; its history stands in).
    """
    events = history_events(root, run_id)
    state = state or _state_from_history(root, run_id, events)
    if state is None:
        return None
    unsettled = {step.number for step in state.steps if step.status not in FINAL_STEP_STATUSES}
    changed = state.status in (RunStatus.RUNNING, RunStatus.STALE) or bool(unsettled)
    if changed:
        state = dataclasses.replace(
            state.settled(final_status(state), ended_at=state.heartbeat), reaped_at=utc_now()
        )
        write_state(root, state)
    closed = _record_final_events(root, events, state.steps)
    if not changed and not closed:
        return None
    touched = unsettled | set(closed)
    steps = tuple(step for step in state.steps if step.number in touched)
    return Settled(state=state, steps=steps, events=len(closed))


def _state_from_history(root: Path, run_id: str, events: list[StepEvent]) -> RunState | None:
    """A run known only to history (its state file is gone), as a stale state to settle."""
    if not events:
        return None
    times = [event.timestamp.isoformat() for event in events]
    return RunState(
        run_id=run_id,
        name=run_name(run_id),
        status=RunStatus.STALE,
        pid=0,
        host="",
        root=str(root),
        backend=events[0].backend,
        started_at=min(times),
        heartbeat=max(times),
        steps=steps_from_history(events),
    )


def _record_final_events(
    root: Path, events: list[StepEvent], steps: tuple[StepState, ...]
) -> list[int]:
    """Close each step attempt left ``running`` in the event log with its final event.

    Returns the numbers of the steps closed.
    """
    latest: dict[int, StepEvent] = {}
    for event in sorted(events, key=lambda e: e.timestamp):
        latest[event.step_number] = event
    now = dt.datetime.now(dt.UTC)
    final: list[StepEvent] = []
    for step in steps:
        running = latest.get(step.number)
        if running is None or running.status is not StepStatus.RUNNING:
            continue  # never started, or its attempt was closed: nothing to close
        status = step.status if step.status in FINAL_STEP_STATUSES else "cancelled"
        counts = step.counts
        final.append(
            dataclasses.replace(
                running,
                status=StepStatus(status),
                timestamp=now,
                total_count=counts.total,
                succeeded_count=counts.succeeded,
                failed_count=counts.failed,
                error="its orchestrator died; settled by stemma reap",
                metadata={**running.metadata, **counts.event_metadata(), "reaped": True},
            )
        )
    if not final:
        return []
    from stemma.core.store.opening import open_run_store

    try:
        open_run_store(root).record_events(final)
    except StoreUnavailableError:
        return []  # a store that keeps no event log: the state file says it all
    return [event.step_number for event in final]
