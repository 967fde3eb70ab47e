"""A screen's header: what it shows, and the command that reopens it, fitted to the width."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from stemma.tui.reopen import header_text, reopen_command


class TitleLine(Static):
    """``run first_2026…`` on the left, ``stemma tui --root ROOT RUN`` on the right.

    Drawn again at each resize: on a narrow terminal the command alone (its root shortened
    from the left), which names the run and the step as well.
    """

    def __init__(
        self,
        label: str,
        root: Path,
        run_id: str | None = None,
        step: int | None = None,
    ) -> None:
        super().__init__(id="title", classes="title")
        self.label = label
        """What the screen shows, in a few words (``run RUN``, ``step 2 of RUN``)."""
        self.root = root
        self.run_id = run_id
        self.step = step

    @property
    def command(self) -> str:
        """The whole command that reopens this screen (the header may shorten its root)."""
        return reopen_command(self.root, self.run_id, self.step)

    def render(self) -> Text:
        """The line for the width the header has now."""
        width = self.content_size.width
        command = reopen_command(self.root, self.run_id, self.step, width=width or None)
        return Text(header_text(self.label, command, width), no_wrap=True, overflow="crop")
