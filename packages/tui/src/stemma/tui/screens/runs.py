"""The first screen: every run of the root, live, sortable and filterable."""

from __future__ import annotations

import datetime as dt
import gc
from typing import TYPE_CHECKING, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker

from stemma.core.cli.run_rows import RunRow
from stemma.core.live import RunStatus
from stemma.tui.client.first_runs import first_screen_runs
from stemma.tui.messages import LoadFailed, RunsLoaded
from stemma.tui.row_filter import RowFilter
from stemma.tui.screens.showing import showing
from stemma.tui.widgets.column_fit import FittedColumn
from stemma.tui.widgets.run_columns import run_columns
from stemma.tui.widgets.runs_shown import RunCells, runs_summary, visible_runs
from stemma.tui.widgets.tables import new_table, table_at

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp
    from stemma.tui.widgets.filter_box import FilterBox

POLL_SECONDS = 1.0
SORTS = ("started", "status", "name", "duration")
FILTERS = ("all", *(status.value for status in RunStatus))
STATUS_KEYS = Binding.Group("status", compact=True)


class RunsScreen(Screen[None]):
    """The runs list. Enter opens a run; ``c`` cancels the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_run", "Open", show=True),
        Binding("c", "cancel_run", "Cancel"),
        Binding("n", "launch", "New run"),
        Binding("s", "cycle_sort", "Sort"),
        Binding("f", "cycle_filter", "Next status", group=STATUS_KEYS),
        Binding("x", "only('failed')", "Failed only", group=STATUS_KEYS),
        Binding("r", "only('running')", "Running only", group=STATUS_KEYS),
        Binding("a", "only('all')", "All runs", group=STATUS_KEYS),
        Binding("slash", "search", "Filter"),
        Binding("escape", "clear_search", "Clear filter", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[RunRow] = []
        self.shown: list[str] = []
        self._drawn: dict[str, tuple[object, ...]] = {}
        self._cells = RunCells()
        self._wanted: str | None = None
        """A run to put the cursor on when it shows (see :meth:`select_when_shown`)."""
        self.sort_by = "started"
        self._partial = False
        self._summary = ""
        self._loading: Worker[None] | None = None
        self._first_frame_shown = False
        self._frozen = False
        """Whether the objects alive after the first full read were taken out of the garbage
        collector's passes (see :meth:`_show_runs`)."""
        self.row_filter = RowFilter()
        self.status_filter = "all"
        self.columns: tuple[FittedColumn, ...] = ()
        """The columns on screen, fitted to the terminal's width."""

    @property
    def stemma(self) -> StemmaApp:
        """The app, typed."""
        return cast("StemmaApp", self.app)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Launch and cancel are off in read-only mode: the app's one rule for every screen."""
        return self.stemma.allows(action)

    def compose(self) -> ComposeResult:
        """Title line, the table and a summary; the keys and the search box come later.

        The footer (~90 ms: a widget per key, each styled twice) is mounted once the first
        frame is on screen, into a line kept for it (had the table shrunk by a line, it would
        have drawn every cell again), and the search box (~50 ms) on the first ``/``: the first
        frame is for the runs.
        """
        yield self.stemma.title_line(f"stemma · {self.stemma.client.root}")
        yield new_table("runs", zebra=True)
        yield Static("loading runs…", id="summary", classes="summary")
        yield Container(id="keys")

    def on_mount(self) -> None:
        """Build the columns and show the runs read before the app started, if any.

        The whole list is read once the first frame is on screen, then every second.
        """
        table = table_at(self, "#runs")
        self._fit_columns(self.stemma.size.width)
        # At once, not at the next tick as table.focus() would: focus changes how every cell is
        # drawn, and the table drawn before it gained focus was drawn again (~0.1 s).
        self.set_focus(table)
        first, self.stemma.first_runs = self.stemma.first_runs, None
        if first is not None:
            self.rows = first
            self._partial = True
            self._redraw()
        if self.stemma.ready:
            self.call_after_refresh(self.after_first_frame)
        self.set_interval(POLL_SECONDS, self.refresh_runs)

    async def after_first_frame(self) -> None:
        """Do what waited for the first frame: read every run, show the keys.

        The app calls it after Textual's start-up (whose frames never reach the terminal); the
        full read imports polars and delta-rs in a thread, which started before the first frame
        went out would take the interpreter lock from the drawing for a second or more.
        """
        if self._first_frame_shown:
            return
        self._first_frame_shown = True
        self.refresh_runs()
        await self.query_one("#keys").mount(Footer())
        self.refresh_bindings()  # a footer shows keys only after a change of bindings

    def on_resize(self, event: Resize) -> None:
        """A new terminal width: fit the columns again (only if they change)."""
        if self._fit_columns(event.size.width):
            self._redraw()

    def _fit_columns(self, width: int) -> bool:
        """Lay the table's columns out for ``width``; False when they stay as they were."""
        columns = run_columns(width)
        if columns == self.columns:
            return False
        table = table_at(self, "#runs")
        table.clear(columns=True)
        for column in columns:
            table.add_column(column.title, key=column.key, width=column.width)
        self.columns = columns
        self.shown = []  # every row is added again, with the new cells
        self._cells.clear()
        return True

    def on_screen_resume(self) -> None:
        """Back on view (from a run, say): read now rather than at the next tick."""
        self.refresh_runs()

    def refresh_runs(self) -> None:
        """Ask a worker for the runs (never reads here: the UI thread must not block).

        Not while the last read is still going: on a slow disk, reads would pile up in threads
        that fight over the interpreter and make each other slower. Not before the first frame
        is drawn either (see :meth:`after_first_frame`).
        """
        busy = self._loading is not None and self._loading.is_running
        if self._first_frame_shown and showing(self) and not busy:
            self._loading = self._load_runs()

    @work(thread=True, exclusive=True, group="runs", exit_on_error=False)
    def _load_runs(self) -> None:
        client = self.stemma.client
        try:
            if not self.rows and (newest := client.live_runs(first_screen_runs())):
                # The newest state files first: they paint in milliseconds; the rest of the
                # state files and the history's Delta read follow.
                self.post_message(RunsLoaded(newest, partial=True))
            rows = client.runs()
        except Exception as err:
            self.post_message(LoadFailed("runs", str(err)))
            return
        self.post_message(RunsLoaded(rows))
        if client.damage is not None:  # rows from state files alone: the summary says why
            self.post_message(LoadFailed("history", client.damage))

    @on(RunsLoaded)
    def _show_runs(self, message: RunsLoaded) -> None:
        """Show the rows read; when only running runs changed, repaint their rows alone.

        The poll hands back every run each second (1,000 and more), the same row object for a
        run whose state did not change: filtering, sorting and comparing them all again was
        most of an idle runs list's CPU.
        """
        unchanged = self._same_but_running(message.rows)
        self.rows = message.rows
        self._partial = message.partial
        if unchanged:
            self._repaint_running()
        else:
            self._redraw()
        if not message.partial and not self._frozen:
            self._frozen = True
            # The full list (10,000 runs: ~435,000 objects with the table's rows) lives as long
            # as the dashboard; each full collection walked them all (~220 ms, on one keystroke
            # in eight). Frozen objects are still freed by reference counting when dropped (a
            # run's row is replaced by a new one); only reference cycles among them would stay,
            # and the rows, cells and table rows hold none. Once: later objects are collected.
            gc.freeze()

    def _same_but_running(self, rows: list[RunRow]) -> bool:
        """Whether ``rows`` are the rows shown, but for running runs whose place cannot move.

        A running run's row is a new object each poll (its staleness is of now); it keeps its
        place while it is still running, matches the filter as before, and the order is not by
        duration (which a running run's time changes).
        """
        if len(rows) != len(self.rows) or self.sort_by == "duration" or not self.shown:
            return False
        text = self._cells.text
        for old, new in zip(self.rows, rows, strict=True):
            if old is new:
                continue
            if not (
                old.run_id == new.run_id
                and old.status is RunStatus.RUNNING
                and new.status is RunStatus.RUNNING
                and text(old) == text(new)
            ):
                return False
        return True

    def _repaint_running(self) -> None:
        """Repaint the rows of running runs shown (their time ticks), and the summary."""
        table = table_at(self, "#runs")
        now = dt.datetime.now(dt.UTC)
        positions: dict[str, int] | None = None
        for row in self.rows:
            if row.status is not RunStatus.RUNNING or row.run_id not in self._drawn:
                continue
            cells = self._cells.of(row, now, self.columns)
            if cells != self._drawn[row.run_id]:
                if positions is None:
                    positions = {key: index for index, key in enumerate(self.shown)}
                table.update_row_at(positions[row.run_id], cells)
                self._drawn[row.run_id] = cells
        self._show_summary(len(self.shown))

    @on(LoadFailed)
    def _show_failure(self, message: LoadFailed) -> None:
        self._summary = f"could not read {message.what}: {message.error}"
        self.query_one("#summary", Static).update(self._summary)

    def visible_rows(self) -> list[RunRow]:
        """The rows that pass the filters, in the chosen order."""
        narrowing = (self.status_filter, self.row_filter)
        return visible_runs(self.rows, *narrowing, sort_by=self.sort_by, text_of=self._cells.text)

    def select_when_shown(self, run_id: str) -> None:
        """Put the cursor on ``run_id`` once the list shows it (a run just launched with ``n``)."""
        self._wanted = run_id
        self.refresh_runs()

    def _redraw(self) -> None:
        table = table_at(self, "#runs")
        rows = self.visible_rows()
        keys = [row.run_id for row in rows]
        now = dt.datetime.now(dt.UTC)
        cells = {row.run_id: self._cells.of(row, now, self.columns) for row in rows}
        if keys != self.shown:
            highlighted = self.highlighted_run()
            table.replace_rows([(key, cells[key]) for key in keys])  # rows found by position
            self.shown = keys
            if highlighted in keys:
                table.move_cursor(row=keys.index(highlighted))
        else:  # a running run's time ticks: repaint its row alone, not all of them
            for index, key in enumerate(keys):
                drawn = self._drawn.get(key)
                if drawn is not cells[key] and drawn != cells[key]:
                    table.update_row_at(index, cells[key])
        self._drawn = cells
        if self._wanted in keys:  # once: then the cursor is the user's again
            table.move_cursor(row=keys.index(self._wanted))
            self._wanted = None
        self._show_summary(len(rows))

    def _show_summary(self, shown: int) -> None:
        narrowing = (self.status_filter, self.row_filter)
        summary = runs_summary(shown, self.rows, *narrowing, self.sort_by, self._partial)
        if summary != self._summary:  # an update lays the screen out again, even unchanged
            self._summary = summary
            self.query_one("#summary", Static).update(summary)

    def highlighted_run(self) -> str | None:
        """The run id under the cursor, if any."""
        table = table_at(self, "#runs")
        if not self.shown or table.cursor_row < 0 or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def action_open_run(self) -> None:
        """Open the highlighted run."""
        run_id = self.highlighted_run()
        if run_id is not None:
            self.stemma.open_run(run_id)

    @on(DataTable.RowSelected, "#runs")
    def _selected(self, message: DataTable.RowSelected) -> None:
        if 0 <= message.cursor_row < len(self.shown):
            self.stemma.open_run(self.shown[message.cursor_row])

    def action_cancel_run(self) -> None:
        """Cancel the highlighted run, one level harder per press."""
        run_id = self.highlighted_run()
        row = next((r for r in self.rows if r.run_id == run_id), None)
        if row is not None:
            self.stemma.press_cancel(row.run_id, row.status, row.cancel_level)

    def action_launch(self) -> None:
        """Ask for a script and start it detached."""
        self.stemma.ask_launch()

    def action_cycle_sort(self) -> None:
        """Next sort order."""
        self.sort_by = SORTS[(SORTS.index(self.sort_by) + 1) % len(SORTS)]
        self._redraw()

    def action_cycle_filter(self) -> None:
        """Next status filter."""
        self.set_status_filter(FILTERS[(FILTERS.index(self.status_filter) + 1) % len(FILTERS)])

    def action_only(self, status: str) -> None:
        """Show only runs with ``status``; pressed again, every run."""
        self.set_status_filter("all" if status == self.status_filter else status)

    def set_status_filter(self, status: str) -> None:
        """Show only runs with ``status`` (``all`` for every run)."""
        self.status_filter = status
        self._redraw()

    def action_search(self) -> None:
        """Show the filter box (made on first use) and type into it."""
        from stemma.tui.widgets.filter_box import FilterBox

        box = next(iter(self.query("#search").results(FilterBox)), None)
        if box is None:  # (~50 ms to make: not before the first frame)
            box = FilterBox(id="search")
            self.mount(box, before="#runs")
        box.open()

    def action_clear_search(self) -> None:
        """Clear and hide the filter box (Escape on the table: the box has its own Escape)."""
        from stemma.tui.widgets.filter_box import FilterBox

        for box in self.query("#search").results(FilterBox):
            box.action_close()

    def on_filter_box_filtered(self, message: FilterBox.Filtered) -> None:
        """Each keystroke in the filter box: show the rows that match now."""
        self.row_filter = message.row_filter
        self._redraw()

    def on_filter_box_done(self) -> None:
        """Enter or Escape in the filter box: back to the table."""
        table_at(self, "#runs").focus()
