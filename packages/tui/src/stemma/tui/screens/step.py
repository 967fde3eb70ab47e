"""One step of a run: its executions (live ones while it runs), their logs, params, outputs.

``f`` follows a running step's live worker logs (:mod:`~stemma.tui.widgets.step_log`). ``/``
filters the executions and the outputs, ``x`` keeps the failed executions and ``r`` the running
ones. The tab keys are in the tab
labels rather than the footer, so every key fits an 80-column footer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane
from textual.worker import Worker

from stemma.tui.client import ExecutionRow, StepView, params_text
from stemma.tui.client.output_names import with_output_names
from stemma.tui.client.table_damage import read_failed
from stemma.tui.messages import LoadFailed, StepLoaded
from stemma.tui.row_filter import RowFilter
from stemma.tui.screens.showing import showing
from stemma.tui.widgets.execution_columns import (
    COLUMNS,
    execution_cells,
    executions_summary,
    shown_executions,
)
from stemma.tui.widgets.filter_box import FilterBox
from stemma.tui.widgets.output_rows import OUTPUT_WIDTH, output_rows
from stemma.tui.widgets.step_log import StepLog
from stemma.tui.widgets.tables import new_table, plain, table_at

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp

POLL_SECONDS = 2.0


class StepScreen(Screen[None]):
    """Tabs: executions, the selected execution's log, params, outputs."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,backspace", "back", "Back"),
        Binding("f", "toggle_follow", "Follow"),
        Binding("x", "toggle_failures", "Failed"),
        Binding("r", "toggle_running", "Running"),
        Binding("slash", "filter", "Filter"),
        # Shown in the tab labels ("Log (l)"), not the footer: see the module docstring.
        Binding("l", "show_tab('log')", "Log", show=False),
        Binding("e", "show_tab('executions')", "Executions", show=False),
        Binding("p", "show_tab('params')", "Params", show=False),
        Binding("o", "show_tab('outputs')", "Outputs", show=False),
        Binding("w", "show_tab('why')", "Why", show=False),
    ]

    def __init__(self, run_id: str, number: int) -> None:
        super().__init__()
        self.run_id = run_id
        self.number = number
        self.view: StepView | None = None
        self.failures_only = False
        self.running_only = False
        self.row_filter = RowFilter()
        self.execution_ids: list[str] = []
        self._drawn: list[ExecutionRow] = []
        self._cells: dict[ExecutionRow, tuple[object, ...]] = {}
        self.output_ids: list[str] = []
        self._loading: Worker[None] | None = None

    @property
    def stemma(self) -> StemmaApp:
        """The app, typed."""
        return cast("StemmaApp", self.app)

    def compose(self) -> ComposeResult:
        """Title, facts, four tabs and the keys."""
        yield self.stemma.title_line(
            f"step {self.number} of {self.run_id}", self.run_id, self.number
        )
        yield Static("loading…", id="step-facts", classes="summary")
        yield FilterBox(id="filter")  # above the tabs: it filters the executions and the outputs
        with TabbedContent(initial="executions"):
            with TabPane("Executions (e)", id="executions"):
                yield new_table("executions-table", zebra=True)
            with TabPane("Log (l)", id="log"):
                yield StepLog(self.run_id, self.number, id="log-view")
            with TabPane("Params (p)", id="params"):
                yield Static("", id="params-view")
            with TabPane("Outputs (o)", id="outputs"):
                yield new_table("outputs-table")
            with TabPane("Why (w)", id="why"):
                yield Static("", id="why-view")
        yield Footer()

    def on_mount(self) -> None:
        """Columns, then read now and every two seconds."""
        executions = table_at(self, "#executions-table")
        for label, width in COLUMNS:
            executions.add_column(label, key=label, width=width)
        outputs = table_at(self, "#outputs-table")
        outputs.add_column("role", width=16)
        outputs.add_column("artifact", width=OUTPUT_WIDTH)
        executions.focus()
        self.refresh_step()
        self.set_interval(POLL_SECONDS, self.refresh_step)

    def refresh_step(self) -> None:
        """Ask a worker for the step, unless it is finished and already shown."""
        done = self.view is not None and self.view.status != "running"
        busy = self._loading is not None and self._loading.is_running
        if showing(self) and not done and not busy:
            self._loading = self._load_step()

    @work(thread=True, exclusive=True, group="step", exit_on_error=False)
    def _load_step(self) -> None:
        client = self.stemma.client
        try:
            view = with_output_names(client.root, client.step(self.run_id, self.number))
        except BaseException as err:  # a Rust panic too: see read_failed
            if not read_failed(err):
                raise
            self.post_message(LoadFailed(f"step {self.number}", client.explain_failure(err)))
            return
        self.post_message(StepLoaded(view))

    @property
    def following(self) -> bool:
        """Whether the log tab follows the step's live worker logs (``f``)."""
        return self.query_one(StepLog).following

    @on(LoadFailed)
    def _show_failure(self, message: LoadFailed) -> None:
        self.query_one("#step-facts", Static).update(f"{message.what}: {message.error}")

    def action_toggle_follow(self) -> None:
        """Follow the step's live worker logs in the log tab, or stop following them."""
        self.query_one(StepLog).follow()
        if self.following:
            self.action_show_tab("log")

    @on(StepLoaded)
    def _show_step(self, message: StepLoaded) -> None:
        self.view = view = message.view
        self.query_one("#params-view", Static).update(params_text(view.params))
        self.query_one("#why-view", Static).update("\n".join(view.why))
        self._draw_executions()
        self._draw_outputs()

    def _draw_outputs(self) -> None:
        """The step's output artifacts, by role, that pass the filter (ids or names match)."""
        if self.view is None:
            return
        outputs = table_at(self, "#outputs-table")
        outputs.clear()
        kept = self.row_filter.select(output_rows(self.view), " ".join)
        for role, artifact_id, shown in kept:
            outputs.add_row(*plain(role, shown), key=f"{role}/{artifact_id}")
        self.output_ids = [artifact_id for _, artifact_id, _ in kept]

    def _draw_executions(self) -> None:
        view = self.view
        if view is None:
            return
        narrowing = {"failures_only": self.failures_only, "running_only": self.running_only}
        rows = shown_executions(view.executions, row_filter=self.row_filter, **narrowing)
        facts = executions_summary(view, len(rows), row_filter=self.row_filter, **narrowing)
        self.query_one("#step-facts", Static).update(
            facts + (f"\n{view.note}" if view.note else "")
        )
        table = table_at(self, "#executions-table")
        ids = [e.execution_run_id for e in rows]
        if ids == self.execution_ids and self._drawn == rows:
            return  # unchanged: keep the cursor and the scroll where they are
        cursor = table.cursor_row
        self.execution_ids, self._drawn = ids, rows
        # A unit unchanged since the last refresh hands the same cells, which the table puts
        # back rather than makes again: a live step of 10,000 units redraws only what moved.
        cells = {e: self._cells.get(e) or plain(*execution_cells(e)) for e in rows}
        self._cells = cells
        table.replace_rows([(e.execution_run_id, cells[e]) for e in rows])
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))

    def action_toggle_failures(self) -> None:
        """Show only failed executions, or all."""
        self.failures_only = not self.failures_only
        self.running_only = False
        self._draw_executions()

    def action_toggle_running(self) -> None:
        """Show only the executions running now, or all."""
        self.running_only = not self.running_only
        self.failures_only = False
        self._draw_executions()

    def action_filter(self) -> None:
        """Type a filter for the executions, or the outputs when they are on view (``/``)."""
        if self.query_one(TabbedContent).active != "outputs":
            self.action_show_tab("executions")
        self.query_one(FilterBox).open()

    def action_back(self) -> None:
        """Escape: clear the filter if one is typed, else back to the run."""
        self.query_one(FilterBox).close_or(self.stemma.pop_screen)

    @on(FilterBox.Filtered)
    def _filtered(self, message: FilterBox.Filtered) -> None:
        self.row_filter = message.row_filter
        self._draw_executions()
        self._draw_outputs()

    @on(FilterBox.Done)
    def _filter_done(self) -> None:
        outputs = self.query_one(TabbedContent).active == "outputs"
        table_at(self, "#outputs-table" if outputs else "#executions-table").focus()

    def action_show_tab(self, tab: str) -> None:
        """Switch to a tab and put the keyboard in it."""
        self.query_one(TabbedContent).active = tab
        focus = {"executions": "#executions-table", "outputs": "#outputs-table", "log": "#log-view"}
        if tab in focus:
            self.query_one(focus[tab]).focus()

    @on(DataTable.RowSelected, "#executions-table")
    def _execution_selected(self, message: DataTable.RowSelected) -> None:
        execution = self._execution(message.row_key.value)
        if execution is not None:
            self.query_one(TabbedContent).active = "log"
            self.query_one(StepLog).show_execution(execution)

    @on(DataTable.RowSelected, "#outputs-table")
    def _output_selected(self, message: DataTable.RowSelected) -> None:
        key = message.row_key.value or ""
        self.stemma.open_artifact(key.split("/", 1)[-1])

    def _execution(self, key: str | None) -> ExecutionRow | None:
        if self.view is None:
            return None
        return next((e for e in self.view.executions if e.execution_run_id == key), None)
