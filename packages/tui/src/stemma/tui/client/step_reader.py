"""One step of a run as the step screen shows it: events, executions (live, then committed), why.

The history comes from :class:`~stemma.tui.client.history.HistoryCache` and the storage queries,
from whichever store holds it (Delta, or ``core.sqlite`` not imported yet). While the step
runs, its units come from the staged bundles and sandboxes (:mod:`live_executions`), watched
for the few steps being looked at. Blocking I/O throughout: called from the app's thread
workers only.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.live import RunStatus, StepState, read_state
from stemma.core.store.failure_logs import failure_log_path
from stemma.tui.client.history import HistoryCache
from stemma.tui.client.running_units import unseen_running
from stemma.tui.client.views import ExecutionRow, StepView

_KEPT_LIVE_STEPS = 4
"""Running steps whose live units are watched at once (the ones being looked at)."""
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_NOT_FINISHED = "not finished yet: nothing to compare"
_FUNCTION_OUTPUTS = {"output": "output_artifact_id", "value": "value_artifact_id"}
"""A lazy function step's roles, and the keys of its final event's metadata that name them."""

if TYPE_CHECKING:
    from stemma.tui.client.live_executions import LiveExecutions


class StepReader:
    """Builds :class:`StepView` for one root; keeps the live-unit watchers between refreshes."""

    def __init__(self, root: Path, history: HistoryCache) -> None:
        self.root = root
        self._history = history
        self._live_units: dict[tuple[str, int], LiveExecutions] = {}

    def step(self, run_id: str, number: int) -> StepView:
        """One step of a run: its newest event's params, its executions and its outputs.

        While the step runs, its executions are committed only at its end: the units running
        now and those finished (staged) come first, each saying so (:mod:`live_executions`),
        then the committed ones; a unit is listed once, committed as soon as history has it.

        Raises:
            LookupError: the step is neither in history nor running in the run's live state.
        """
        events = [e for e in self._history.run_events(run_id) if e.step_number == number]
        running = self._running_step(run_id, number)
        if not events and running is None:
            raise LookupError(f"step {number} of run {run_id} has nothing in history yet")
        if not events:
            assert running is not None
            live = self._live_rows(run_id, running, None)
            return StepView(
                run_id=run_id,
                number=number,
                name=running.name,
                operation=running.operation,
                status=running.status,
                params={},
                executions=tuple(live),
                outputs={},
                running_units=running.running,
                why=(_NOT_FINISHED,),
            )
        event = events[-1]
        source = str(event.metadata.get("outputs_from") or event.step_run_id)
        note = ""
        if source != event.step_run_id:
            note = f"a step-level cache hit: these are the executions of step run {source[:8]}"
        live: list[ExecutionRow] = []
        if event.status.value == "running" and running is not None:
            # (live rows before committed ones: a commit appends its rows, then takes their
            # bundles away, so a unit is in one or the other whenever it is read in this order)
            live = self._live_rows(run_id, running, event.step_run_id)
        else:
            self._live_units.pop((run_id, number), None)  # final: history has every unit
        rows, outputs, why = self._committed(source, event.step_name, run_id)
        outputs = outputs or function_outputs(event.metadata)
        committed = [self._execution(row) for row in rows]
        known = {e.execution_run_id for e in committed}
        live = [e for e in live if e.execution_run_id not in known]
        return StepView(
            run_id=run_id,
            number=number,
            name=event.step_name,
            operation=event.operation,
            status=event.status.value,
            params=dict(event.params),
            executions=(*live, *committed),
            outputs=dict(outputs),
            note=note,
            why=tuple(why),
            running_units=running.running if running is not None else 0,
        )

    def _committed(
        self, source: str, name: str, run_id: str
    ) -> tuple[list[dict[str, Any]], Mapping[str, tuple[str, ...]], list[str]]:
        """A step run's committed execution rows, its outputs, and why it ran."""
        from stemma.storage.queries import executions

        rows = list(executions(self.root, step_run_id=source).iter_rows(named=True))
        store = self._history.store
        outputs = store.step_outputs([source]).get(source, {}) if store is not None else {}
        return rows, outputs, self._why(name, run_id)

    def _running_step(self, run_id: str, number: int) -> StepState | None:
        """The step's live state while it runs (None once it ended, or without a state)."""
        try:
            state = read_state(self.root, run_id)
        except (FileNotFoundError, ValueError):
            return None
        step = next((s for s in state.steps if s.number == number), None)
        if step is None or step.status != "running" or state.status is not RunStatus.RUNNING:
            return None
        return step

    def _live_rows(
        self, run_id: str, step: StepState, step_run_id: str | None
    ) -> list[ExecutionRow]:
        from stemma.tui.client.live_executions import LiveExecutions  # polars: off the paint path

        key = (run_id, step.number)
        watcher = self._live_units.get(key)
        if watcher is None:
            if len(self._live_units) >= _KEPT_LIVE_STEPS:
                self._live_units.pop(next(iter(self._live_units)))
            watcher = self._live_units[key] = LiveExecutions(
                self.root, number=step.number, name=step.name, operation=step.operation
            )
        since = dt.datetime.fromisoformat(step.started_at) if step.started_at else _EPOCH
        rows = watcher.rows(since=since, step_run_id=step_run_id)
        return rows + unseen_running(step, rows)

    def _why(self, name: str, run_id: str) -> list[str]:
        from stemma.core.runs.explaining import explain_step  # loads the operations: not at paint

        history = self._history.explain_events(name)
        try:
            return explain_step(history, name, run_id)
        except LookupError:
            return [_NOT_FINISHED]

    def _execution(self, row: dict[str, Any]) -> ExecutionRow:
        log = failure_log_path(
            self.root, int(row["step_number"]), str(row["operation"]), row["execution_run_id"]
        )
        started, ended = row["started_at"], row["ended_at"]
        return ExecutionRow(
            execution_run_id=row["execution_run_id"],
            success=bool(row["success"]),
            started_at=f"{started:%H:%M:%S}" if started is not None else "",
            duration_s=(ended - started).total_seconds() if started and ended else None,
            worker=str(row["worker"] or ""),
            error=str(row["error"] or ""),
            failure_log=log if not row["success"] and log.is_file() else None,
            worker_log=str(row["worker_log"] or row["tool_output"] or ""),
        )


def function_outputs(metadata: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """A lazy function step's outputs, per role, as its final event names them.

    Such a step has no step-outputs rows: its output file ref (``output``) and its return value's
    metric (``value``) are in its event's metadata. Empty for any other step, or a value of None.
    """
    return {
        role: (str(metadata[key]),)
        for role, key in _FUNCTION_OUTPUTS.items()
        if isinstance(metadata.get(key), str) and metadata[key]
    }
