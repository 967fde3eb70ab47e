"""One artifact: a preview of its content and its lineage one hop up and down, navigable."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from stemma.tui.client import ArtifactView, LineageEdge
from stemma.tui.messages import ArtifactLoaded, LoadFailed
from stemma.tui.widgets.tables import new_table, plain, table_at

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp


class ArtifactScreen(Screen[None]):
    """Enter on a lineage row opens that artifact; ``u``/``d`` jump to the up/down lists."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,backspace", "app.pop_screen", "Back"),
        Binding("u", "focus_lineage('up')", "Made from"),
        Binding("d", "focus_lineage('down')", "Made into"),
        Binding("v", "focus_preview", "Preview"),
    ]

    def __init__(self, artifact_id: str) -> None:
        super().__init__()
        self.artifact_id = artifact_id
        self.view: ArtifactView | None = None

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
        with Horizontal(id="lineage"):
            yield new_table("up")
            yield new_table("down")
        yield Footer()

    def on_mount(self) -> None:
        """Columns, then one read (an artifact never changes)."""
        for table_id, title in (("up", "made from"), ("down", "made into")):
            table = table_at(self, f"#{table_id}")
            table.add_column(title, key="id", width=12)
            table.add_column("type", key="type", width=8)
            table.add_column("role", key="role", width=10)
        table_at(self, "#preview-table").display = False
        self._load()

    @work(thread=True, exclusive=True, group="artifact", exit_on_error=False)
    def _load(self) -> None:
        try:
            view = self.stemma.client.artifact(self.artifact_id)
        except Exception as err:
            self.post_message(LoadFailed(f"artifact {self.artifact_id}", str(err)))
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
            text.update(view.preview_text or f"{view.size} bytes")
        for table_id, edges in (("up", view.up), ("down", view.down)):
            lineage = table_at(self, f"#{table_id}")
            for edge in edges:
                lineage.add_row(*plain(*_edge_cells(edge)), key=edge.artifact_id)
        self.query_one("#up" if view.up else "#down", DataTable).focus()

    def action_focus_lineage(self, direction: str) -> None:
        """Move the cursor to the ``up`` or ``down`` list."""
        table_at(self, f"#{direction}").focus()

    def action_focus_preview(self) -> None:
        """Move focus to the preview (to scroll it)."""
        self.query_one("#preview", VerticalScroll).focus()

    @on(DataTable.RowSelected, "#up, #down")
    def _open(self, message: DataTable.RowSelected) -> None:
        if message.row_key.value is not None:
            self.stemma.open_artifact(message.row_key.value)


def _edge_cells(edge: LineageEdge) -> tuple[str, str, str]:
    return (edge.artifact_id[:12], edge.artifact_type, edge.role)
