"""``n`` on the runs list: start a pipeline script detached, so it outlives the dashboard.

What is typed is split as a shell would (``flows/nightly.py --day 2026-11-30`` is a script and
two arguments), and the exact ``stemma run --detach`` command it becomes is shown as it is
typed: the dashboard starts runs the way the command line does, and says so.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from stemma.core.cli.exit_codes import CliError
from stemma.core.cli.launching import detach_command, split_script_line

HINT = "Enter starts it · Esc cancels"


def command_preview(text: str) -> tuple[str, bool]:
    """The command ``text`` would run, or why it cannot be split; and whether it can run."""
    if not text.strip():
        return "runs: stemma run --detach SCRIPT [ARGS…]", False
    try:
        script, argv = split_script_line(text)
    except CliError as err:
        return str(err), False
    return f"runs: {detach_command(script, argv)}", True


class LaunchScreen(ModalScreen[str | None]):
    """Asks for a script and its arguments; dismisses with the line typed (None on Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    def compose(self) -> ComposeResult:
        """A prompt, the input, the command it becomes and a hint."""
        with Vertical(id="launch"):
            yield Static("Run a pipeline script detached (it keeps running after you leave):")
            yield Input(
                placeholder="path/to/script.py ARGS…, a.module ARGS… or a.module:function",
                id="script",
            )
            yield Static(command_preview("")[0], id="command", markup=False)
            yield Static(HINT, classes="summary")

    def on_mount(self) -> None:
        """Type straight away."""
        self.query_one("#script", Input).focus()

    @on(Input.Changed, "#script")
    def _changed(self, message: Input.Changed) -> None:
        preview, runnable = command_preview(message.value)
        command = self.query_one("#command", Static)
        command.update(preview)
        command.set_class(not runnable and bool(message.value.strip()), "launch-error")

    @on(Input.Submitted, "#script")
    def _submitted(self, message: Input.Submitted) -> None:
        if not message.value.strip():
            self.dismiss(None)
            return
        if command_preview(message.value)[1]:
            self.dismiss(message.value.strip())
        # else: the line under the input already says why it cannot run; stay for the fix

    def action_dismiss_none(self) -> None:
        """Close without launching."""
        self.dismiss(None)
