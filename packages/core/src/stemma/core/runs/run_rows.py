"""One row per run and one per step, merged from the live channel and the history.

A running run is best described by its state file (it has unit counts before any commit); a
finished one by its state file if it is still there, else by the steps event log. Pure
functions over :class:`~stemma.core.live.RunState` and
:class:`~stemma.core.execution_records.StepEvent`: the command line and the dashboard share them.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, cast

from stemma.core.live import RunState, RunStatus, StepState
from stemma.core.live.state import FINAL_STEP_STATUSES, STALE_STEP
from stemma.core.records import StepStatus
from stemma.core.unit_counts import UnitCounts

if TYPE_CHECKING:
    # Annotations only: execution_records (~6 ms) is not needed to paint from state files.
    from stemma.core.execution_records import StepEvent

LONG_ARGUMENT = 24
"""A path argument longer than this is shown by its last part in a run's description."""

__all__ = [
    "FINAL_STEP_STATUSES",
    "RunRow",
    "merge_runs",
    "provenance_of",
    "row_from_state",
    "rows_from_history",
    "run_name",
    "run_outcome",
    "steps_from_history",
]


@dataclass(frozen=True, kw_only=True)
class RunRow:
    """One run as the runs list shows it."""

    run_id: str
    name: str
    status: RunStatus
    started: dt.datetime
    ended: dt.datetime | None
    steps_done: int
    steps_total: int
    host: str = ""
    pid: int | None = None
    cancel_level: int = 0
    live: bool = False
    """True when this row comes from a state file (units are counted live)."""
    user: str = ""
    """Who started the run (empty when neither its state file nor its history says)."""
    command: tuple[str, ...] = ()
    """``sys.argv`` of its orchestrator: the script and its arguments (empty when unknown)."""
    cwd: str = ""
    """The orchestrator's working directory (known from a state file only)."""

    @property
    def short_id(self) -> str:
        """The run id's random tail (``{name}_{date}_{time}_{hex}``).

        Unique enough to tell runs apart on a screen, and short enough to type.
        """
        return self.run_id.rsplit("_", 1)[-1]

    @property
    def script(self) -> str:
        """The script's file name and its arguments, quoted as a shell would.

        The pipeline's name when the command is unknown (a run recorded before it was kept).
        """
        if not self.command:
            return self.name
        program = PurePath(self.command[0]).name or self.command[0]
        return shlex.join((program, *self.command[1:]))

    @property
    def description(self) -> str:
        """One line that tells this run apart: its script and arguments.

        After the pipeline's name, unless the script's file name already says it: a run started
        from ``pytest`` or a notebook reads ``first · pytest -q``.
        """
        if not self.command:
            return self.name
        program = PurePath(self.command[0]).name or self.command[0]
        # A long path among the arguments (the root, say) would push out the ones that differ.
        script = " ".join((shlex.quote(program), *map(_shown_argument, self.command[1:])))
        return script if self.name in program else f"{self.name} · {script}"

    def duration(self, now: dt.datetime) -> float:
        """Seconds from start to end, or to ``now`` while running."""
        end = self.ended or now
        return max(0.0, (end - self.started).total_seconds())


def run_name(run_id: str) -> str:
    """The pipeline name in a run id (``{name}_{YYYYmmdd}_{HHMMSS}_{hex}``)."""
    parts = run_id.rsplit("_", 3)
    return parts[0] if len(parts) == 4 else run_id


def run_outcome(state: RunState) -> RunStatus:
    """The run's status, where a completed run with failed units counts as failed.

    Under the ``continue`` policy a run completes even when some units failed; a script waiting
    for it (and a person scanning the runs list) must still see that it did not all succeed.
    """
    if state.status is RunStatus.COMPLETED and any(step.failed for step in state.steps):
        return RunStatus.FAILED
    return state.status


def row_from_state(state: RunState) -> RunRow:
    """A live run's row."""
    done = sum(1 for step in state.steps if step.status in FINAL_STEP_STATUSES)
    return RunRow(
        run_id=state.run_id,
        name=state.name,
        status=run_outcome(state),
        started=_parse(state.started_at),
        ended=_ended(state),
        steps_done=done,
        steps_total=len(state.steps),
        host=state.host,
        pid=state.pid,
        cancel_level=state.cancel_level,
        live=True,
        user=state.user,
        command=state.command,
        cwd=state.cwd,
    )


def steps_from_history(events: Iterable[StepEvent]) -> tuple[StepState, ...]:
    """One run's steps as live-state rows, rebuilt from its event log (newest event wins).

    Read from history, a run has no live orchestrator: a step whose newest event is
    ``running`` is ``stale`` (its writer died before its final event), never running.
    """
    latest: dict[int, StepEvent] = {}
    started: dict[int, dt.datetime] = {}
    for event in sorted(events, key=lambda e: e.timestamp):
        latest[event.step_number] = event
        started.setdefault(event.step_number, event.timestamp)
    return tuple(_step_state(latest[n], started[n]) for n in sorted(latest))


def rows_from_history(events: Sequence[StepEvent]) -> list[RunRow]:
    """One row per run in the event log; a run whose last step is still ``running`` is stale."""
    by_run: dict[str, list[StepEvent]] = {}
    for event in events:
        by_run.setdefault(event.pipeline_run_id, []).append(event)
    return [_history_row(run_id, run_events) for run_id, run_events in by_run.items()]


def merge_runs(states: Sequence[RunState], events: Sequence[StepEvent]) -> list[RunRow]:
    """Every run, newest first: from its state file when it has one, else from history."""
    rows = {row.run_id: row for row in rows_from_history(events)}
    rows.update({state.run_id: row_from_state(state) for state in states})
    return sorted(rows.values(), key=lambda row: row.started, reverse=True)


def _history_row(run_id: str, events: Sequence[StepEvent]) -> RunRow:
    steps = steps_from_history(events)
    times = [event.timestamp for event in events]
    statuses = {step.status for step in steps}
    if STALE_STEP in statuses:
        status = RunStatus.STALE  # a live run writes a state file; this one's writer is gone
    elif StepStatus.FAILED.value in statuses or any(step.failed for step in steps):
        status = RunStatus.FAILED
    elif StepStatus.CANCELLED.value in statuses:
        status = RunStatus.CANCELLED
    else:
        status = RunStatus.COMPLETED
    who = provenance_of(events)
    return RunRow(
        run_id=run_id,
        name=run_name(run_id),
        status=status,
        started=min(times),
        ended=None if status is RunStatus.STALE else max(times),
        steps_done=sum(1 for step in steps if step.status in FINAL_STEP_STATUSES),
        steps_total=len(steps),
        host=_text(who.get("host")),
        user=_text(who.get("user")),
        command=_command(who.get("command_line")),
    )


def provenance_of(events: Iterable[StepEvent]) -> Mapping[str, object]:
    """The run's provenance (user, host, ``command_line``…) as its running events recorded it.

    It is the same for every step of a run; empty when no event carries it.
    """
    for event in events:
        found = event.metadata.get("provenance")
        if isinstance(found, Mapping):
            return cast(Mapping[str, object], found)
    return {}


def _shown_argument(argument: str) -> str:
    """An argument quoted as a shell would; a long path as ``…/`` and its quoted last part."""
    if len(argument) <= LONG_ARGUMENT or "/" not in argument.strip("/"):
        return shlex.quote(argument)
    return "…/" + shlex.quote(PurePath(argument).name)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _command(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(str(part) for part in cast(Sequence[object], value))
    return ()


def _step_state(event: StepEvent, started: dt.datetime) -> StepState:
    cache = event.metadata.get("cache")
    counts = UnitCounts.of_event(event)
    stale = event.status is StepStatus.RUNNING
    return StepState(
        number=event.step_number,
        name=event.step_name,
        operation=event.operation,
        status=STALE_STEP if stale else event.status.value,
        cache="step" if isinstance(cache, str) and cache == "step" else None,
        total=counts.total,
        cached=counts.cached,
        succeeded=counts.succeeded,
        failed=counts.failed,
        cancelled=counts.cancelled,
        started_at=started.isoformat(),
        ended_at=event.timestamp.isoformat(),
    )


def _ended(state: RunState) -> dt.datetime | None:
    if state.ended_at:
        return _parse(state.ended_at)
    if state.status is RunStatus.STALE:
        return _parse(state.heartbeat)  # its last sign of life: the duration stops growing
    return None


def _parse(text: str) -> dt.datetime:
    parsed = dt.datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
