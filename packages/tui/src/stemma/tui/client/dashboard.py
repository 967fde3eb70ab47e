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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.cancel_levels import CancelLevel
from stemma.core.live import RunState, read_state, request_cancel
from stemma.core.runs.run_rows import (
    RunRow,
    row_from_state,
    rows_from_history,
    steps_from_history,
)
from stemma.tui.client.history import HistoryCache
from stemma.tui.client.live_states import LiveStates
from stemma.tui.client.table_damage import DamageWatch, find_damage

if TYPE_CHECKING:
    from stemma.core.runs.launching import Detached
    from stemma.tui.client.log_follow import LogFollower
    from stemma.tui.client.step_reader import StepReader
    from stemma.tui.client.views import ArtifactView, RunView, StepView

# What only the run, step and artifact screens ask for (views, step trees, ETAs, log following:
# a dozen frozen dataclasses, ~10 ms of imports) is imported by the methods that answer them:
# the first frame needs the runs' state files alone.

LOG_TAIL_BYTES = 256 * 1024


class DashboardClient:
    """Reads one root's runs, steps, executions and artifacts; asks runs to cancel."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._history = HistoryCache(root)
        self._live = LiveStates(root)
        self._damage = DamageWatch(root)
        self._steps: StepReader | None = None
        self._merged: tuple[list[RunRow], int, list[RunRow]] | None = None
        """The last :meth:`runs`: the history rows and live version it was made from, and it."""

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

    def explain_failure(self, error: BaseException) -> str:
        """What a failed read of a run, step or artifact says, in one paragraph.

        The damaged table, its file and the fix when a table is damaged (not polars' bare
        "expected parquet magic bytes"), else the error itself.
        """
        try:
            damage = find_damage(self.root, error)
        except Exception:  # looking for the damage must never hide the error itself
            damage = None
        return damage.message(self.root, still_shown="") if damage is not None else str(error)

    def runs(self) -> list[RunRow]:
        """Every run, newest first: live ones from their state files, the rest from history.

        A damaged table leaves the runs that have a state file (:attr:`damage` says why).
        """
        history = self._history.rows() if self._damage.readable(self._history.rows) else []
        live = self._live.rows()
        version, last = self._live.version, self._merged
        if last is not None and last[0] is history and last[1] == version:
            # Nothing changed since the last call (the usual idle second): merging and sorting
            # 1,000 rows again was a third of an idle runs list's CPU.
            return list(last[2])
        rows = {row.run_id: row for row in history}
        rows.update({row.run_id: row for row in live})
        merged = sorted(rows.values(), key=lambda row: row.started, reverse=True)
        self._merged = (history, version, merged)
        return list(merged)

    def run(self, run_id: str) -> RunView:
        """One run's steps, live when it has a state file (from it alone when history is damaged).

        Raises:
            LookupError: no such run under the root.
        """
        from stemma.tui.client.eta import Paces, history_eta
        from stemma.tui.client.step_tree import upstream_from_events, with_upstream
        from stemma.tui.client.views import RunView

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
        """One step of a run: params, executions (live ones first while it runs) and outputs.

        Raises:
            LookupError: the step is neither in history nor running in the run's live state.
        """
        if self._steps is None:
            from stemma.tui.client.step_reader import StepReader

            self._steps = StepReader(self.root, self._history)
        return self._steps.step(run_id, number)

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
        # Here, not at module level: launching is for ``n`` alone, not the first frame.
        from stemma.core.runs.launching import detach, split_script_line

        script, argv = split_script_line(line)
        return detach(self.root, script, argv, None)

    def log_follower(self, run_id: str, number: int) -> LogFollower:
        """A follower of the live log files of one running step (see :mod:`log_follow`).

        Raises:
            LookupError: the run has no live state, or the step is not running.
        """
        from stemma.tui.client.log_follow import LogFollower

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
