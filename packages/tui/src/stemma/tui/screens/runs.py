"""The first screen: every run of the root, live, sortable and filterable.

This module reads the runs and shows them; what each key does is :mod:`.runs_keys`'s.
"""

from __future__ import annotations

import datetime as dt

from rich.cells import cell_len
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Container
from textual.events import Resize
from textual.widgets import Footer, Static
from textual.worker import Worker

from stemma.core.runs.run_rows import RunRow
from stemma.tui import collector
from stemma.tui.client.first_runs import first_screen_runs
from stemma.tui.messages import LoadFailed, RunsLoaded
from stemma.tui.screens.runs_keys import FILTERS, SORTS, STATUS_KEYS, RunsKeys
from stemma.tui.screens.showing import showing
from stemma.tui.widgets.column_fit import FittedColumn
from stemma.tui.widgets.run_columns import run_columns
from stemma.tui.widgets.runs_order import RunsOrder
from stemma.tui.widgets.runs_shown import RunCells, runs_summary
from stemma.tui.widgets.tables import new_table, table_at

__all__ = ["FILTERS", "POLL_SECONDS", "SORTS", "STATUS_KEYS", "RunsScreen"]

POLL_SECONDS = 1.0


class RunsScreen(RunsKeys):
    """The runs list. Enter opens a run; ``c`` cancels the highlighted one."""

    def __init__(self) -> None:
        super().__init__()
        self._cells = RunCells()
        self._order = RunsOrder(self._cells)
        self._wanted: str | None = None
        """A run to put the cursor on when it shows (see :meth:`select_when_shown`)."""
        self._partial = False
        self._summary = ""
        self._loading: Worker[None] | None = None
        self._first_frame_shown = False
        self.columns: tuple[FittedColumn, ...] = ()
        """The columns on screen, fitted to the terminal's width."""

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
            self._take(first)
            self._partial = True
            self.redraw()
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
            self.redraw()

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
        shown = bool(self.shown)  # (a list filtered to nothing compares nothing)
        unchanged = self._take(message.rows, keep_orders=shown and self.sort_by != "duration")
        self._partial = message.partial
        if unchanged:
            self._repaint_running()
        else:
            self.redraw()
        if not message.partial:
            collector.settle_long_lived()  # the full list is held: see stemma.tui.collector

    def on_unmount(self) -> None:
        """The dashboard is closing: the process's collector as it was (a test runs many)."""
        collector.restore()

    def _take(self, rows: list[RunRow], *, keep_orders: bool = False) -> bool:
        """Hold ``rows``; whether they are the rows held but for running runs that stay so."""
        self.rows = rows
        return self._order.take(rows, keep_orders=keep_orders)

    def _repaint_running(self) -> None:
        """Repaint the rows of running runs drawn (their time ticks), and the summary.

        A row not drawn yet is made from the run's row when it is (see :meth:`_cells_of`).
        """
        table = table_at(self, "#runs")
        drawn = table.rows_read
        now = dt.datetime.now(dt.UTC)
        for run_id in self._order.running:
            if run_id not in drawn:
                continue
            row = self._order.by_id[run_id]
            cells = self._cells.of(row, now, self.columns)
            if cells != drawn[row.run_id]:
                table.update_row_at(table.get_row_index(row.run_id), cells)
        self._show_summary(len(self.shown))

    @on(LoadFailed)
    def _show_failure(self, message: LoadFailed) -> None:
        self._summary = f"could not read {message.what}: {message.error}"
        self.query_one("#summary", Static).update(self._summary)

    def visible_rows(self) -> list[RunRow]:
        """The rows that pass the filters, in the chosen order."""
        return self._order.visible(self.status_filter, self.row_filter, self.sort_by)

    def select_when_shown(self, run_id: str) -> None:
        """Put the cursor on ``run_id`` once the list shows it (a run just launched with ``n``)."""
        self._wanted = run_id
        self.refresh_runs()

    def redraw(self) -> None:
        """Show the rows that pass the filters; the table makes the cells of those it draws.

        The same rows as shown: only rows drawn whose cells changed are repainted.
        """
        table = table_at(self, "#runs")
        self.visible_rows()
        keys = self._order.shown_ids  # (the same list while the filters are: see show_rows)
        if keys != self.shown:
            highlighted = self.highlighted_run()
            table.show_rows(keys, self._cells_of)  # rows found by position
            self.shown = keys
            if highlighted in keys:
                table.move_cursor(row=keys.index(highlighted))
        else:  # a running run's time ticks, a run ended: repaint its row alone
            for key, drawn in table.rows_read.items():
                cells = self._cells_of(key)
                if drawn is not cells and drawn != cells:
                    table.update_row_at(table.get_row_index(key), cells)
        if self._wanted in keys:  # once: then the cursor is the user's again
            table.move_cursor(row=keys.index(self._wanted))
            self._wanted = None
        self._show_summary(len(keys))

    def _cells_of(self, run_id: str) -> tuple[object, ...]:
        """The cells of a run's row, as the table draws it (finished runs' are kept)."""
        return self._cells.of(self._order.by_id[run_id], dt.datetime.now(dt.UTC), self.columns)

    def _show_summary(self, shown: int) -> None:
        narrowing = (self.status_filter, self.row_filter, self.sort_by, self._partial)
        summary = runs_summary(shown, self.rows, *narrowing, running=len(self._order.running))
        if summary != self._summary:  # an update lays the screen out again, even unchanged
            line = self.query_one("#summary", Static)
            # One line before and after: its height stays, so the screen's layout does (each
            # filter keystroke changes the summary; laying the screen out was ~2-4 ms of it).
            width = line.content_size.width
            same_height = cell_len(summary) <= width and cell_len(self._summary) <= width
            self._summary = summary
            line.update(summary, layout=not same_height)
