"""One run: its steps live, as a tree by dependencies; progress, counts, ETAs; ``c`` cancels.

Each step hangs under the step it reads from; a running step's time column shows ``~`` and the
time left at its earlier runs' pace (or, with no earlier run, at its own pace so far). A stale
run (its orchestrator gone) says which of its elements its scheduler still holds, and ``r``
resumes it as ``stemma resume`` does (on any other run, ``r`` shows only the running steps).
"""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker

from stemma.core.live import RunStatus
from stemma.tui.client.step_tree import TreeRow, step_tree, tree_label
from stemma.tui.client.table_damage import read_failed
from stemma.tui.client.views import RunView
from stemma.tui.messages import LoadFailed, RunLoaded
from stemma.tui.row_filter import RowFilter
from stemma.tui.screens.showing import showing
from stemma.tui.screens.stale_run import StaleRun
from stemma.tui.widgets.cancel_bar import CancelBar, how_it_ended
from stemma.tui.widgets.cells import (
    duration_text,
    jobs_text,
    progress_bar,
    status_text,
    time_cell,
)
from stemma.tui.widgets.column_fit import FittedColumn
from stemma.tui.widgets.filter_box import FilterBox
from stemma.tui.widgets.step_columns import STEP_FILTERS, step_columns, step_matches, step_text
from stemma.tui.widgets.tables import new_table, plain, table_at

POLL_SECONDS = 1.0
STATUS_KEYS = Binding.Group("status", compact=True)


class RunScreen(StaleRun):
    """A run's steps. Enter opens a step; ``c`` asks the run to cancel, harder each press."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,backspace", "back", "Back"),
        Binding("enter", "open_step", "Open step", show=True),
        Binding("c", "cancel_run", "Cancel"),
        Binding("f", "cycle_filter", "Next status", group=STATUS_KEYS),
        Binding("x", "only('failed')", "Failed only", group=STATUS_KEYS),
        Binding("r", "only('running')", "Running only", group=STATUS_KEYS),
        Binding("a", "only('all')", "All steps", group=STATUS_KEYS),
        # r's other meaning: on a stale run (where nothing runs) the filter is off and r resumes.
        Binding("r", "resume_run", "Resume"),
        Binding("slash", "filter", "Filter"),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__(run_id)
        self.view: RunView | None = None
        self.numbers: list[int] = []
        self.columns: tuple[FittedColumn, ...] = ()
        """The columns on screen, fitted to the width and to the longest step name."""
        self._drawn: dict[int, tuple[object, ...]] = {}
        """Per step, the cells on screen: only changed cells are updated (each redraws)."""
        self._facts = ""
        self._loading: Worker[None] | None = None
        self.status_filter = "all"
        self.row_filter = RowFilter()

    def compose(self) -> ComposeResult:
        """Header, cancel bar, the filter box (hidden), the steps table and the keys."""
        yield self.stemma.title_line(f"run {self.run_id}", self.run_id)
        yield Static("loading…", id="run-facts", classes="summary")
        yield CancelBar(id="cancel-bar")
        yield FilterBox(id="filter")
        yield new_table("steps", zebra=True)
        yield Footer()

    def on_mount(self) -> None:
        """Read now and every second (the columns come with the steps: they fit the names)."""
        # The table, not the (hidden) filter box before it: an input that has focus takes the
        # letter keys, which would hide every key of the footer but ``/``.
        self.set_focus(table_at(self, "#steps"))
        self.query_one(CancelBar).show_levels(0, 0)
        self.refresh_run()
        self.set_interval(POLL_SECONDS, self.refresh_run)

    def on_resize(self, event: Resize) -> None:
        """A new terminal width: fit the columns again."""
        if self.view is not None:
            self._draw(self.view, event.size.width)

    def refresh_run(self) -> None:
        """Ask a worker for the run's state (unless the last read is still going)."""
        if showing(self) and not (self._loading and self._loading.is_running):
            self._loading = self._load_run()

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def _load_run(self) -> None:
        try:
            view = self.stemma.client.run(self.run_id)
        except BaseException as err:  # a Rust panic too: see read_failed
            if not read_failed(err):
                raise
            self.post_message(
                LoadFailed(f"run {self.run_id}", self.stemma.client.explain_failure(err))
            )
            return
        self.post_message(RunLoaded(view))

    @on(LoadFailed)
    def _show_failure(self, message: LoadFailed) -> None:
        self.query_one("#run-facts", Static).update(
            f"could not read {message.what}: {message.error}"
        )

    @on(RunLoaded)
    def _show_run(self, message: RunLoaded) -> None:
        self.view = message.view
        self._draw(message.view, self.size.width or self.stemma.size.width)

    def redraw(self) -> None:
        """Draw the run again as last read (what the scheduler holds of a stale run changed)."""
        if self.view is not None:
            self._draw(self.view, self.size.width)

    def _draw(self, view: RunView, width: int) -> None:
        now = dt.datetime.now(dt.UTC)
        row = view.row
        ended = how_it_ended(row.status, row.cancel_level)
        where = f" on {row.host} (pid {row.pid})" if row.host else ""
        source = "live" if view.state is not None else "from history"
        facts = (
            f"{ended or row.status.value}{where} · {duration_text(row.duration(now))} · "
            f"steps {row.steps_done}/{row.steps_total} · {source}"
        )
        self.note_staleness(row.status is RunStatus.STALE)
        showing_only = [self.status_filter] if self.status_filter != "all" else []
        if self.row_filter.active:
            showing_only.append(self.row_filter.describe())
        if showing_only:
            facts += f" · showing {', '.join(showing_only)}"
        facts += self.stale_facts(view.state)
        if facts != self._facts:  # an unchanged Static still repaints when updated
            self._facts = facts
            self.query_one("#run-facts", Static).update(facts)
        self.query_one("#run-facts", Static).set_class(True, f"status-{row.status.value}")
        self.query_one(CancelBar).show_levels(row.cancel_level, self.presses, row.status)
        tree = step_tree(self.stale_jobs.steps(view.steps) if self.stale else view.steps)
        columns = step_columns(width, tree)  # all steps: the columns do not jump as one filters
        shown = [r for r in tree if step_matches(r.step, self.status_filter)]
        self._draw_steps(columns, self.row_filter.select(shown, step_text), view.etas, now)

    def _draw_steps(
        self,
        columns: tuple[FittedColumn, ...],
        rows: list[TreeRow],
        etas: dict[int, float],
        now: dt.datetime,
    ) -> None:
        table = table_at(self, "#steps")
        numbers = [row.step.number for row in rows]
        if columns != self.columns:
            table.clear(columns=True)
            for column in columns:
                table.add_column(column.title, key=column.key, width=column.width)
            self.columns = columns
            self.numbers = []
        if numbers != self.numbers:
            cursor = table.cursor_row
            table.clear()
            self._drawn = {row.step.number: self._cells(row, etas, now) for row in rows}
            for row in rows:
                table.add_row(*self._drawn[row.step.number], key=str(row.step.number))
            self.numbers = numbers
            if 0 <= cursor < len(numbers):
                table.move_cursor(row=cursor)
            return
        for row in rows:
            cells = self._cells(row, etas, now)
            shown = self._drawn.get(row.step.number, ())
            for index, (column, value) in enumerate(zip(self.columns, cells, strict=True)):
                if index >= len(shown) or shown[index] != value:
                    table.update_cell(str(row.step.number), column.key, value)
            self._drawn[row.step.number] = cells

    def _cells(self, row: TreeRow, etas: dict[int, float], now: dt.datetime) -> tuple[object, ...]:
        step = row.step
        hit = step.cache == "step"
        eta = etas.get(step.number)
        widths = {column.key: column.width for column in self.columns}
        by_label: dict[str, object] = {
            "#": step.number,
            "step": tree_label(row, widths["step"]),
            "status": status_text("hit" if hit and step.status == "completed" else step.status),
            "progress": progress_bar(step, width=widths.get("progress", 8)),
            "done": f"{step.done}/{step.total}",
            "hit": step.cached,
            "fail": step.failed,
            "cncl": step.cancelled,
            "run": step.running,
            "time": f"~{duration_text(eta)}" if eta is not None else time_cell(step, now),
            "jobs": jobs_text(step),
        }
        return plain(*(by_label[column.key] for column in self.columns))

    def highlighted_step(self) -> int | None:
        """The step number under the cursor."""
        table = table_at(self, "#steps")
        if 0 <= table.cursor_row < len(self.numbers):
            return self.numbers[table.cursor_row]
        return None

    def action_open_step(self) -> None:
        """Open the highlighted step."""
        number = self.highlighted_step()
        if number is not None:
            self.stemma.open_step(self.run_id, number)

    @on(DataTable.RowSelected, "#steps")
    def _selected(self, message: DataTable.RowSelected) -> None:
        if message.row_key.value is not None:
            self.stemma.open_step(self.run_id, int(message.row_key.value))

    def action_cancel_run(self) -> None:
        """One press: ask for the next level of cancellation, and say what the next press does."""
        if self.view is None:
            return
        row = self.view.row
        if self.stemma.press_cancel(self.run_id, row.status, row.cancel_level) is not None:
            self.query_one(CancelBar).show_levels(row.cancel_level, self.presses, row.status)

    def action_cycle_filter(self) -> None:
        """Next status filter."""
        index = STEP_FILTERS.index(self.status_filter)
        self._set_status_filter(STEP_FILTERS[(index + 1) % len(STEP_FILTERS)])

    def action_only(self, status: str) -> None:
        """Show only steps with ``status``; pressed again, every step."""
        self._set_status_filter("all" if status == self.status_filter else status)

    def _set_status_filter(self, status: str) -> None:
        self.status_filter = status
        if self.view is not None:
            self._draw(self.view, self.size.width)

    def action_filter(self) -> None:
        """Type a filter for the steps (``/``)."""
        self.query_one(FilterBox).open()

    def action_back(self) -> None:
        """Escape: clear the filter if one is typed, else back to the runs."""
        self.query_one(FilterBox).close_or(self.stemma.pop_screen)

    @on(FilterBox.Filtered)
    def _filtered(self, message: FilterBox.Filtered) -> None:
        self.row_filter = message.row_filter
        if self.view is not None:
            self._draw(self.view, self.size.width)

    @on(FilterBox.Done)
    def _filter_done(self) -> None:
        table_at(self, "#steps").focus()

    @property
    def presses(self) -> int:
        """The highest level asked for from this dashboard."""
        return self.stemma.cancel_presses.get(self.run_id, 0)
