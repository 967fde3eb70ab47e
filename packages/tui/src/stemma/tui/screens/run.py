"""One run: its steps live, with a progress bar and counts each; ``c`` escalates a cancel."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from stemma.core.live import StepState
from stemma.tui.client.views import RunView
from stemma.tui.messages import LoadFailed, RunLoaded
from stemma.tui.widgets.cancel_bar import CancelBar
from stemma.tui.widgets.cells import (
    duration_text,
    jobs_text,
    progress_bar,
    status_text,
    time_cell,
)
from stemma.tui.widgets.tables import new_table, table_at

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp

POLL_SECONDS = 1.0
COLUMNS = (
    ("#", 2),
    ("step", 17),
    ("status", 9),
    ("progress", 10),
    ("done", 7),
    ("hit", 3),
    ("fail", 4),
    ("run", 3),
    ("time", 6),
)
"""Fits 80 columns with the table's cell padding; the SLURM jobs column comes after."""
JOBS_COLUMN = ("jobs", 12)


class RunScreen(Screen[None]):
    """A run's steps. Enter opens a step; ``c`` asks the run to cancel, harder each press."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,backspace", "app.pop_screen", "Back"),
        Binding("enter", "open_step", "Open step", show=True),
        Binding("c", "cancel_run", "Cancel"),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.view: RunView | None = None
        self.numbers: list[int] = []
        self._jobs_shown = False

    @property
    def stemma(self) -> StemmaApp:
        """The app, typed."""
        return cast("StemmaApp", self.app)

    def compose(self) -> ComposeResult:
        """Header, cancel bar, the steps table and the keys."""
        yield Static(f"run {self.run_id}", id="title", classes="title")
        yield Static("loading…", id="run-facts", classes="summary")
        yield CancelBar(id="cancel-bar")
        yield new_table("steps", zebra=True)
        yield Footer()

    def on_mount(self) -> None:
        """Columns, then read now and every second."""
        table = table_at(self, "#steps")
        for label, width in COLUMNS:
            table.add_column(label, key=label, width=width)
        self.query_one(CancelBar).show_levels(0, 0)
        self.refresh_run()
        self.set_interval(POLL_SECONDS, self.refresh_run)

    def refresh_run(self) -> None:
        """Ask a worker for the run's state."""
        if self.is_current:
            self._load_run()

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def _load_run(self) -> None:
        try:
            view = self.stemma.client.run(self.run_id)
        except Exception as err:
            self.post_message(LoadFailed(f"run {self.run_id}", str(err)))
            return
        self.post_message(RunLoaded(view))

    @on(LoadFailed)
    def _show_failure(self, message: LoadFailed) -> None:
        self.query_one("#run-facts", Static).update(
            f"could not read {message.what}: {message.error}"
        )

    @on(RunLoaded)
    def _show_run(self, message: RunLoaded) -> None:
        self.view = view = message.view
        now = dt.datetime.now(dt.UTC)
        row = view.row
        where = f" on {row.host} (pid {row.pid})" if row.host else ""
        source = "live" if view.state is not None else "from history"
        self.query_one("#run-facts", Static).update(
            f"{row.status.value}{where} · {duration_text(row.duration(now))} · "
            f"steps {row.steps_done}/{row.steps_total} · {source}"
        )
        self.query_one("#run-facts", Static).set_class(True, f"status-{row.status.value}")
        self.query_one(CancelBar).show_levels(row.cancel_level, self.presses)
        self._draw_steps(view.steps, now)

    def _draw_steps(self, steps: tuple[StepState, ...], now: dt.datetime) -> None:
        table = table_at(self, "#steps")
        if not self._jobs_shown and any(step.jobs for step in steps):
            table.add_column(JOBS_COLUMN[0], key=JOBS_COLUMN[0], width=JOBS_COLUMN[1])
            self._jobs_shown = True
        numbers = [step.number for step in steps]
        if numbers != self.numbers:
            cursor = table.cursor_row
            table.clear()
            for step in steps:
                table.add_row(*self._cells(step, now), key=str(step.number))
            self.numbers = numbers
            if 0 <= cursor < len(numbers):
                table.move_cursor(row=cursor)
            return
        labels = [label for label, _ in COLUMNS] + ([JOBS_COLUMN[0]] if self._jobs_shown else [])
        for step in steps:
            for label, value in zip(labels, self._cells(step, now), strict=True):
                table.update_cell(str(step.number), label, value)

    def _cells(self, step: StepState, now: dt.datetime) -> tuple[object, ...]:
        hit = step.cache == "step"
        cells: tuple[object, ...] = (
            step.number,
            step.name,
            status_text("hit" if hit and step.status == "completed" else step.status),
            progress_bar(step, width=10),
            f"{step.done}/{step.total}",
            step.cached,
            step.failed,
            step.running,
            time_cell(step, now),
        )
        return (*cells, jobs_text(step)) if self._jobs_shown else cells

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
            self.query_one(CancelBar).show_levels(row.cancel_level, self.presses)

    @property
    def presses(self) -> int:
        """The highest level asked for from this dashboard."""
        return self.stemma.cancel_presses.get(self.run_id, 0)
