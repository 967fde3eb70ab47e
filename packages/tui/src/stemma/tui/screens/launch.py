"""``n`` on the runs list: start a pipeline script detached, so it outlives the dashboard.

What is typed is split as a shell would (``flows/nightly.py --day 2026-11-30`` is a script and
two arguments), and the exact ``stemma run --detach`` command it becomes is shown as it is
typed, with the dashboard's root (``--root R``): the dashboard starts runs the way the command
line does, and says so, in a line that runs on the same root when pasted into a shell.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from stemma.core.exit_codes import CliError
from stemma.core.runs.launching import detach_command, split_script_line

HINT = "Enter starts it · Esc cancels"


def command_preview(text: str, root: Path) -> tuple[str, bool]:
    """The command ``text`` would run on ``root``, or why it cannot be split; and whether it can."""
    if not text.strip():
        return f"runs: stemma run --detach --root {shlex.quote(str(root))} SCRIPT [ARGS…]", False
    try:
        script, argv = split_script_line(text)
    except CliError as err:
        return str(err), False
    return f"runs: {detach_command(script, argv, root=root)}", True


class LaunchScreen(ModalScreen[str | None]):
    """Asks for a script and its arguments; dismisses with the line typed (None on Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, root: Path) -> None:
        """Ask for a run on ``root`` (the dashboard's: the command shown names it)."""
        super().__init__()
        self.root = root

    def compose(self) -> ComposeResult:
        """A prompt, the input, the command it becomes and a hint."""
        with Vertical(id="launch"):
            yield Static("Run a pipeline script detached (it keeps running after you leave):")
            yield Input(
                placeholder="path/to/script.py ARGS…, a.module ARGS… or a.module:function",
                id="script",
            )
            yield Static(command_preview("", self.root)[0], id="command", markup=False)
            yield Static("", id="last-launch", classes="launch-error", markup=False)
            yield Static(HINT, classes="summary")

    def on_mount(self) -> None:
        """Type straight away."""
        self.query_one("#last-launch", Static).display = False
        self.query_one("#script", Input).focus()

    def show_error(self, said: str) -> None:
        """Say why the last launch failed here, not in a toast over the dialog."""
        last = self.query_one("#last-launch", Static)
        last.update(f"the last launch failed: {said}")
        last.display = True

    @on(Input.Changed, "#script")
    def _changed(self, message: Input.Changed) -> None:
        preview, runnable = command_preview(message.value, self.root)
        command = self.query_one("#command", Static)
        command.update(preview)
        command.set_class(not runnable and bool(message.value.strip()), "launch-error")

    @on(Input.Submitted, "#script")
    def _submitted(self, message: Input.Submitted) -> None:
        if not message.value.strip():
            self.dismiss(None)
            return
        if command_preview(message.value, self.root)[1]:
            self.dismiss(message.value.strip())
        # else: the line under the input already says why it cannot run; stay for the fix

    def action_dismiss_none(self) -> None:
        """Close without launching."""
        self.dismiss(None)
