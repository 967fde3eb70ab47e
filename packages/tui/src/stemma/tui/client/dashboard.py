"""The dashboard's headless client: every read and write the screens need, with no Textual.

Each method does blocking I/O (state files, Delta scans), so the app calls them only from
thread workers. Everything returned is frozen data from :mod:`stemma.tui.client.views`.

stemma.storage (polars, pyarrow, delta-rs: seconds of imports on a busy machine) is imported
inside the methods that read Delta tables, never at module level: the runs list paints from the
runs' state files before any of it is loaded.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.cancel_levels import CancelLevel
from stemma.core.cli.launching import Detached, detach, split_script_line
from stemma.core.cli.run_rows import (
    RunRow,
    row_from_state,
    rows_from_history,
    steps_from_history,
)
from stemma.core.engine.failure_logs import failure_log_path
from stemma.core.live import RunState, RunStatus, StepState, read_state, request_cancel
from stemma.tui.client.eta import Paces, history_eta
from stemma.tui.client.history import HistoryCache
from stemma.tui.client.live_states import LiveStates
from stemma.tui.client.log_follow import LogFollower
from stemma.tui.client.running_units import unseen_running
from stemma.tui.client.step_tree import upstream_from_events, with_upstream
from stemma.tui.client.table_damage import DamageWatch
from stemma.tui.client.views import ArtifactView, ExecutionRow, RunView, StepView

LOG_TAIL_BYTES = 256 * 1024
_KEPT_LIVE_STEPS = 4
"""Running steps whose live units are watched at once (the ones being looked at)."""
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

if TYPE_CHECKING:
    from stemma.tui.client.live_executions import LiveExecutions
    from stemma.tui.client.sqlite_history import SqliteHistory


class DashboardClient:
    """Reads one root's runs, steps, executions and artifacts; asks runs to cancel."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._history = HistoryCache(root)
        self._live = LiveStates(root)
        self._damage = DamageWatch(root)
        self._live_units: dict[tuple[str, int], LiveExecutions] = {}
        self._sqlite: SqliteHistory | None = None

    def live_runs(self, newest: int | None = None) -> list[RunRow]:
        """The runs that have a state file, newest first: no Delta read, no heavy import.

        Every run writes one while it lives and leaves its final one behind, so on most roots
        this is the whole list; with ``newest``, only that many of the most recently written
        ones, enough for a first screen. :meth:`runs` adds the runs known only to history
        (state files removed, or written by older versions).
        """
        rows = self._live.rows(newest)
        return sorted(rows, key=lambda row: row.started, reverse=True)

    @property
    def damage(self) -> str | None:
        """What makes the history unreadable (the table, the file, the fix); None when it reads.

        While it is set, :meth:`runs` and :meth:`run` answer from the state files alone.
        """
        return self._damage.message()

    def runs(self) -> list[RunRow]:
        """Every run, newest first: live ones from their state files, the rest from history.

        A damaged table leaves the runs that have a state file (:attr:`damage` says why).
        """
        history = self._history.rows() if self._damage.readable(self._history.rows) else []
        rows = {row.run_id: row for row in history}
        rows.update({row.run_id: row for row in self._live.rows()})
        return sorted(rows.values(), key=lambda row: row.started, reverse=True)

    def run(self, run_id: str) -> RunView:
        """One run's steps, live when it has a state file (from it alone when history is damaged).

        Raises:
            LookupError: no such run under the root.
        """
        readable = self._damage.readable(self._history.rows)
        events = self._history.run_events(run_id) if readable else []
        latest = {event.step_number: event.step_run_id for event in events}
        upstream = upstream_from_events(events)
        state: RunState | None
        try:
            state = read_state(self.root, run_id)
        except (FileNotFoundError, ValueError):
            state = None
        if state is not None:
            steps = with_upstream(state.steps, upstream)
            specs = {event.step_number: event.step_spec_id for event in events}
            known = self._history.paces() if readable else Paces()
            etas = {
                step.number: eta
                for step in steps
                if (eta := history_eta(step, specs.get(step.number), known)) is not None
            }
            row = row_from_state(state)
            return RunView(row=row, state=state, steps=steps, step_run_ids=latest, etas=etas)
        if not events:
            why = "" if readable else f"; its history cannot be read: {self.damage}"
            raise LookupError(f"no run {run_id!r} under {self.root}{why}")
        [row] = rows_from_history(events)
        steps = with_upstream(steps_from_history(events), upstream)
        return RunView(row=row, state=None, steps=steps, step_run_ids=latest)

    def step(self, run_id: str, number: int) -> StepView:
        """One step of a run: its newest event's params, its executions and its outputs.

        While the step runs, its executions are committed only at its end: the units running
        now and those finished (staged) come first, each saying so (:mod:`live_executions`),
        then the committed ones; a unit is listed once, committed as soon as history has it.

        Raises:
            LookupError: the step is neither in history nor running in the run's live state.
        """
        sqlite = self._sqlite_history()
        history = sqlite.run_events(run_id) if sqlite else self._history.run_events(run_id)
        events = [e for e in history if e.step_number == number]
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
                why=("not finished yet: nothing to compare",),
            )
        event = events[-1]
        source = str(event.metadata.get("outputs_from") or event.step_run_id)
        note = ""
        if source != event.step_run_id:
            note = f"a step-level cache hit: these are the executions of step run {source[:8]}"
        rows, outputs, why = self._committed(sqlite, source, event.step_name, run_id)
        committed = [self._execution(row) for row in rows]
        live: list[ExecutionRow] = []
        if event.status.value == "running" and running is not None:
            known = {e.execution_run_id for e in committed}
            live = self._live_rows(run_id, running, event.step_run_id)
            live = [e for e in live if e.execution_run_id not in known]
        else:
            self._live_units.pop((run_id, number), None)  # final: history has every unit
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

    def _sqlite_history(self) -> SqliteHistory | None:
        """A SQLite root's history (None on a Delta root: :class:`HistoryCache` reads that)."""
        if self._sqlite is None and not (self.root / "delta").is_dir():
            from stemma.tui.client.sqlite_history import SqliteHistory

            if SqliteHistory.present(self.root):
                self._sqlite = SqliteHistory(self.root)
        return self._sqlite

    def _committed(
        self, sqlite: SqliteHistory | None, source: str, name: str, run_id: str
    ) -> tuple[list[dict[str, Any]], Mapping[str, tuple[str, ...]], list[str]]:
        """A step run's committed execution rows, its outputs, and why it ran."""
        if sqlite is not None:
            from stemma.core.cli.explaining import explain_step  # loads the operations

            try:
                why = explain_step(sqlite.named_events(name), name, run_id)
            except LookupError:
                why = ["not finished yet: nothing to compare"]
            return sqlite.executions(source), sqlite.outputs(source), why
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
        from stemma.core.cli.explaining import explain_step  # loads the operations: not at paint
        from stemma.storage.execution_rows import event_from_row
        from stemma.storage.queries import steps

        history = [event_from_row(row) for row in steps(self.root, name=name).iter_rows(named=True)]
        try:
            return explain_step(history, name, run_id)
        except LookupError:
            return ["not finished yet: nothing to compare"]

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

    def artifact(self, artifact_id: str) -> ArtifactView:
        """One artifact's preview and its lineage one hop up and one hop down.

        Raises:
            LookupError: no such artifact.
        """
        from stemma.storage.queries import lineage
        from stemma.tui.client.artifact_reader import read_artifact

        store = self._history.store
        if store is None:
            raise LookupError(f"no artifacts under {self.root} yet")
        up = lineage(self.root, artifact_id, "up", max_depth=1)
        down = lineage(self.root, artifact_id, "down", max_depth=1)
        return read_artifact(self.root, store, artifact_id, up, down)

    def cancel(self, run_id: str, level: CancelLevel) -> CancelLevel:
        """Ask the run to cancel at ``level`` (it notices within a second)."""
        request_cancel(self.root, run_id, level)
        return level

    def launch(self, line: str) -> Detached:
        """Start the script and arguments typed on ``line`` detached on this root.

        The line is split as a shell would, and started exactly as ``stemma run --detach``
        starts it (waiting up to a minute for the run's id).

        Raises:
            CliError: the line cannot be split, names no script file, or the launcher failed.
        """
        script, argv = split_script_line(line)
        return detach(self.root, script, argv, None)

    def log_follower(self, run_id: str, number: int) -> LogFollower:
        """A follower of the live log files of one running step (see :mod:`log_follow`).

        Raises:
            LookupError: the run has no live state, or the step is not running.
        """
        try:
            state = read_state(self.root, run_id)
        except (FileNotFoundError, ValueError) as err:
            raise LookupError(f"run {run_id} has no live state to follow: {err}") from err
        step = next((s for s in state.steps if s.number == number), None)
        if step is None or step.status != "running" or step.started_at is None:
            status = "not in the run" if step is None else step.status
            raise LookupError(f"step {number} is {status}: nothing live to follow")
        return LogFollower(
            self.root,
            run_id=run_id,
            step_number=number,
            operation=step.operation,
            since=dt.datetime.fromisoformat(step.started_at).timestamp(),
        )

    def read_log(self, path: Path) -> str:
        """The end of a log file (the last :data:`LOG_TAIL_BYTES`)."""
        try:
            with path.open("rb") as handle:
                size = handle.seek(0, 2)
                handle.seek(max(0, size - LOG_TAIL_BYTES))
                return handle.read().decode("utf-8", errors="replace")
        except OSError as err:
            return f"{path}: {err.strerror or err}"


def params_text(params: dict[str, Any]) -> str:
    """A step's params as indented JSON."""
    return json.dumps(params, indent=2, sort_keys=True, default=str)
