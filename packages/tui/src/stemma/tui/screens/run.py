"""One run: its steps live, as a tree by dependencies; progress, counts, ETAs; ``c`` cancels.

Each step hangs under the step it reads from; a running step's time column shows ``~`` and the
time left at its earlier runs' pace (or, with no earlier run, at its own pace so far).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker

from stemma.tui.client.step_tree import TreeRow, step_tree, tree_label
from stemma.tui.client.views import RunView
from stemma.tui.messages import LoadFailed, RunLoaded
from stemma.tui.screens.showing import showing
from stemma.tui.widgets.cancel_bar import CancelBar
from stemma.tui.widgets.cells import (
    duration_text,
    jobs_text,
    progress_bar,
    status_text,
    time_cell,
)
from stemma.tui.widgets.tables import new_table, plain, table_at

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp

POLL_SECONDS = 1.0
COLUMNS = (
    ("#", 2),
    ("step", 23),
    ("status", 9),
    ("done", 7),
    ("hit", 3),
    ("fail", 4),
    ("cncl", 4),
    ("run", 3),
    ("time", 6),
)
"""Fits 80 columns with the table's cell padding. The counts are those of
``stemma.core.unit_counts``: done (succeeded, failed or cancelled) of total, hit (cached, part
of succeeded), fail, cncl (cancelled) and run (running)."""
BAR_COLUMN = ("progress", 8)
"""Shown after the status on a terminal wide enough for it (80 columns hold the counts)."""
JOBS_COLUMN = ("jobs", 12)
"""The SLURM job states, after the rest once a step has jobs."""
STEP_COLUMN_GROWTH = 21
"""Columns the step names gain on a wide terminal (at most)."""


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
        self._labels: list[str] = []
        """The columns on screen, in order."""
        self._drawn: dict[int, tuple[object, ...]] = {}
        self._facts = ""
        self._loading: Worker[None] | None = None
        """Per step, the cells on screen: only changed cells are updated (each redraws)."""

    @property
    def stemma(self) -> StemmaApp:
        """The app, typed."""
        return cast("StemmaApp", self.app)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Launch and cancel are off in read-only mode: the app's one rule for every screen."""
        return self.stemma.allows(action)

    def compose(self) -> ComposeResult:
        """Header, cancel bar, the steps table and the keys."""
        yield self.stemma.title_line(f"run {self.run_id}", self.run_id)
        yield Static("loading…", id="run-facts", classes="summary")
        yield CancelBar(id="cancel-bar")
        yield new_table("steps", zebra=True)
        yield Footer()

    def on_mount(self) -> None:
        """Columns, then read now and every second."""
        table = table_at(self, "#steps")
        spare = max(0, self.stemma.size.width - 80)  # wide: a progress bar, then longer names
        columns = list(COLUMNS)
        if spare >= BAR_COLUMN[1] + 2:
            columns.insert(3, BAR_COLUMN)
            spare -= BAR_COLUMN[1] + 2
        for label, width in columns:
            grown = width + min(spare, STEP_COLUMN_GROWTH) if label == "step" else width
            table.add_column(label, key=label, width=grown)
        self._labels = [label for label, _ in columns]
        self.query_one(CancelBar).show_levels(0, 0)
        self.refresh_run()
        self.set_interval(POLL_SECONDS, self.refresh_run)

    def refresh_run(self) -> None:
        """Ask a worker for the run's state (unless the last read is still going)."""
        if showing(self) and not (self._loading and self._loading.is_running):
            self._loading = self._load_run()

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
        facts = (
            f"{row.status.value}{where} · {duration_text(row.duration(now))} · "
            f"steps {row.steps_done}/{row.steps_total} · {source}"
        )
        if facts != self._facts:  # an unchanged Static still repaints when updated
            self._facts = facts
            self.query_one("#run-facts", Static).update(facts)
        self.query_one("#run-facts", Static).set_class(True, f"status-{row.status.value}")
        self.query_one(CancelBar).show_levels(row.cancel_level, self.presses)
        self._draw_steps(step_tree(view.steps), view.etas, now)

    def _draw_steps(self, rows: list[TreeRow], etas: dict[int, float], now: dt.datetime) -> None:
        table = table_at(self, "#steps")
        if not self._jobs_shown and any(row.step.jobs for row in rows):
            table.add_column(JOBS_COLUMN[0], key=JOBS_COLUMN[0], width=JOBS_COLUMN[1])
            self._jobs_shown = True
            self._labels.append(JOBS_COLUMN[0])
        numbers = [row.step.number for row in rows]
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
            for index, (label, value) in enumerate(zip(self._labels, cells, strict=True)):
                if index >= len(shown) or shown[index] != value:
                    table.update_cell(str(row.step.number), label, value)
            self._drawn[row.step.number] = cells

    def _cells(self, row: TreeRow, etas: dict[int, float], now: dt.datetime) -> tuple[object, ...]:
        step = row.step
        hit = step.cache == "step"
        eta = etas.get(step.number)
        by_label: dict[str, object] = {
            "#": step.number,
            "step": tree_label(row),
            "status": status_text("hit" if hit and step.status == "completed" else step.status),
            "progress": progress_bar(step, width=BAR_COLUMN[1]),
            "done": f"{step.done}/{step.total}",
            "hit": step.cached,
            "fail": step.failed,
            "cncl": step.cancelled,
            "run": step.running,
            "time": f"~{duration_text(eta)}" if eta is not None else time_cell(step, now),
            "jobs": jobs_text(step),
        }
        return plain(*(by_label[label] for label in self._labels))

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
