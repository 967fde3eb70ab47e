"""The runs list's keys: open, cancel, launch, sort, status filters and the ``/`` filter box.

Apart from :mod:`.runs`, which reads and shows the runs: each key changes a setting and asks
the screen to show the runs again (:meth:`RunsKeys.redraw`), or acts on the highlighted run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from textual import on
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable

from stemma.core.live import RunStatus
from stemma.core.runs.run_rows import RunRow
from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.tables import table_at

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp
    from stemma.tui.widgets.filter_box import FilterBox

SORTS = ("started", "status", "name", "duration")
FILTERS = ("all", *(status.value for status in RunStatus))
STATUS_KEYS = Binding.Group("status", compact=True)


class RunsKeys(Screen[None]):
    """What the runs list's keys do; :class:`~.runs.RunsScreen` shows the runs."""

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
        """Every run read, unfiltered."""
        self.shown: list[str] = []
        """The run ids in the table, in order."""
        self.sort_by = "started"
        self.row_filter = RowFilter()
        self.status_filter = "all"

    @property
    def stemma(self) -> StemmaApp:
        """The app, typed."""
        return cast("StemmaApp", self.app)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Launch and cancel are off in read-only mode: the app's one rule for every screen."""
        return self.stemma.allows(action)

    def redraw(self) -> None:
        """Show the runs that pass the filters, in the order chosen (the screen's business)."""
        raise NotImplementedError

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
        self.redraw()

    def action_cycle_filter(self) -> None:
        """Next status filter."""
        self.set_status_filter(FILTERS[(FILTERS.index(self.status_filter) + 1) % len(FILTERS)])

    def action_only(self, status: str) -> None:
        """Show only runs with ``status``; pressed again, every run."""
        self.set_status_filter("all" if status == self.status_filter else status)

    def set_status_filter(self, status: str) -> None:
        """Show only runs with ``status`` (``all`` for every run)."""
        self.status_filter = status
        self.redraw()

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
        self.redraw()

    def on_filter_box_done(self) -> None:
        """Enter or Escape in the filter box: back to the table."""
        table_at(self, "#runs").focus()
