"""One artifact: a preview of its content and its lineage one hop up and down, navigable.

Each lineage row is one edge: the far artifact, the step and the execution that made it. Edges
to the same artifact from different steps are different rows, and an artifact a step made from
its own bytes shows ``itself`` there. A file a lazy step's key read (a ``Path`` argument) ends the
list up: its content hash and its path; ``Enter`` on it says what it is (it is no artifact).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal, cast

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from stemma.tui.client import ArtifactView
from stemma.tui.client.table_damage import read_failed
from stemma.tui.client.views import LineageEdge
from stemma.tui.messages import ArtifactLoaded, LoadFailed
from stemma.tui.row_filter import RowFilter
from stemma.tui.widgets.filter_box import FilterBox
from stemma.tui.widgets.lineage_columns import edge_cells, lineage_columns
from stemma.tui.widgets.tables import new_table, plain, table_at
from stemma.tui.wording import counted

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp


class ArtifactScreen(Screen[None]):
    """Enter on a lineage row opens that artifact; ``u``/``d`` jump to the up/down lists."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,backspace", "back", "Back"),
        Binding("u", "focus_lineage('up')", "From"),
        Binding("d", "focus_lineage('down')", "Into"),
        Binding("v", "focus_preview", "Preview"),
        Binding("slash", "filter", "Filter"),
    ]

    def __init__(self, artifact_id: str) -> None:
        super().__init__()
        self.artifact_id = artifact_id
        self.view: ArtifactView | None = None
        self.row_filter = RowFilter()
        """What ``/`` typed: it keeps the matching edges of both lineage lists."""

    @property
    def stemma(self) -> StemmaApp:
        """The app, typed."""
        return cast("StemmaApp", self.app)

    def compose(self) -> ComposeResult:
        """Title, facts, preview, the two lineage lists and the keys."""
        yield Static(f"artifact {self.artifact_id}", id="title", classes="title")
        yield Static("loading…", id="artifact-facts", classes="summary")
        with VerticalScroll(id="preview"):
            yield Static("", id="preview-text")
            yield new_table("preview-table", cursor=False)
        yield FilterBox(id="filter")
        with Horizontal(id="lineage"):
            yield new_table("up")
            yield new_table("down")
        yield Footer()

    def on_mount(self) -> None:
        """Titles, then one read (an artifact never changes)."""
        for table_id, title in (("up", "made from"), ("down", "made into")):
            table_at(self, f"#{table_id}").border_title = title
        table_at(self, "#preview-table").display = False
        self._load()

    @work(thread=True, exclusive=True, group="artifact", exit_on_error=False)
    def _load(self) -> None:
        try:
            view = self.stemma.client.artifact(self.artifact_id)
        except BaseException as err:  # a Rust panic too: see read_failed
            if not read_failed(err):
                raise
            self.post_message(
                LoadFailed(f"artifact {self.artifact_id}", self.stemma.client.explain_failure(err))
            )
            return
        self.post_message(ArtifactLoaded(view))

    @on(LoadFailed)
    def _show_failure(self, message: LoadFailed) -> None:
        self.query_one("#artifact-facts", Static).update(f"{message.what}: {message.error}")

    @on(ArtifactLoaded)
    def _show(self, message: ArtifactLoaded) -> None:
        self.view = view = message.view
        self.query_one("#artifact-facts", Static).update(view.origin)
        text = self.query_one("#preview-text", Static)
        table = table_at(self, "#preview-table")
        if view.preview_kind == "table" and view.preview_rows:
            header, *rows = view.preview_rows
            table.add_columns(*(Text(label) for label in header))  # not markup: see plain()
            table.add_rows(plain(*row) for row in rows)
            table.display = True
            text.display = False
        else:
            text.update(view.preview_text or counted(view.size, "byte"))
        self._fill_lineage(view, self.size.width)
        self.query_one("#up" if view.up else "#down", DataTable).focus()

    def on_resize(self, event: events.Resize) -> None:
        """Choose the lineage columns again for the new width."""
        if self.view is not None:
            self._fill_lineage(self.view, event.size.width)

    def _fill_lineage(self, view: ArtifactView, screen_width: int) -> None:
        """Both lineage tables, with the columns that fit half of ``screen_width``."""
        # The two tables share the width; each has a one-column border on either side.
        columns = lineage_columns(screen_width // 2 - 2)
        for table_id, edges in (("up", view.up), ("down", view.down)):
            lineage = table_at(self, f"#{table_id}")
            cursor = lineage.cursor_row
            lineage.clear(columns=True)
            for column in columns:
                lineage.add_column(Text(column.title), key=column.key, width=column.width)
            # Keys stay the edges' positions in the view: Enter opens the right one when filtered.
            kept = self.row_filter.select(enumerate(edges), lambda pair: _edge_text(pair[1]))
            for index, edge in kept:
                lineage.add_row(*plain(*edge_cells(edge, columns)), key=str(index))
            lineage.border_subtitle = (
                f"{len(kept)} of {len(edges)}" if self.row_filter.active else ""
            )
            if kept:
                lineage.move_cursor(row=min(cursor, len(kept) - 1))

    def action_back(self) -> None:
        """Escape: clear the filter if one is typed, else back to where the artifact opened."""
        self.query_one(FilterBox).close_or(self.stemma.pop_screen)

    def action_filter(self) -> None:
        """Type a filter for both lineage lists (substring or regex, ``!`` inverts)."""
        self.query_one(FilterBox).open()

    @on(FilterBox.Filtered)
    def _filtered(self, message: FilterBox.Filtered) -> None:
        self.row_filter = message.row_filter
        if self.view is not None:
            self._fill_lineage(self.view, self.size.width)

    @on(FilterBox.Done)
    def _filter_done(self) -> None:
        if self.view is not None:
            self.query_one("#up" if self.view.up else "#down", DataTable).focus()

    def action_focus_lineage(self, direction: str) -> None:
        """Move the cursor to the ``up`` or ``down`` list."""
        table_at(self, f"#{direction}").focus()

    def action_focus_preview(self) -> None:
        """Move focus to the preview (to scroll it)."""
        self.query_one("#preview", VerticalScroll).focus()

    @on(DataTable.RowSelected, "#up")
    def _open_up(self, message: DataTable.RowSelected) -> None:
        self._open("up", message.row_key.value)

    @on(DataTable.RowSelected, "#down")
    def _open_down(self, message: DataTable.RowSelected) -> None:
        self._open("down", message.row_key.value)

    def _open(self, direction: Literal["up", "down"], key: str | None) -> None:
        if self.view is None or key is None:
            return
        edge = (self.view.up if direction == "up" else self.view.down)[int(key)]
        if edge.itself or edge.input_file:
            # Opening it again would show this same screen, and a file has no artifact screen:
            # say who made it from what instead.
            title = "an input file" if edge.input_file else f"artifact {edge.artifact_id[:12]}"
            self.notify(edge.sentence(direction), title=title, markup=False)
        else:
            self.stemma.open_artifact(edge.artifact_id)


def _edge_text(edge: LineageEdge) -> str:
    """What a filter matches an edge on: every column, shown or not, with the full ids."""
    fields = (edge.artifact_id, edge.name, edge.artifact_type, edge.role, edge.step_name)
    return " ".join((*fields, edge.execution_run_id, "itself" if edge.itself else ""))
