"""``n`` on the runs list: start a pipeline script detached, so it outlives the dashboard."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class LaunchScreen(ModalScreen[str | None]):
    """Asks for a script; dismisses with it (or None on Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    def compose(self) -> ComposeResult:
        """A prompt, the input and a hint."""
        with Vertical(id="launch"):
            yield Static("Run a pipeline script detached (it keeps running after you leave):")
            yield Input(placeholder="path/to/script.py, a.module or a.module:function", id="script")
            yield Static("Enter starts it · Esc cancels", classes="summary")

    def on_mount(self) -> None:
        """Type straight away."""
        self.query_one("#script", Input).focus()

    @on(Input.Submitted, "#script")
    def _submitted(self, message: Input.Submitted) -> None:
        self.dismiss(message.value.strip() or None)

    def action_dismiss_none(self) -> None:
        """Close without launching."""
        self.dismiss(None)
