"""``?``: every key of every screen on one page, readable at 80x24."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP = """\
[b]stemma dashboard[/b] — keyboard first; Esc or ? closes this page.

[b]Everywhere[/b]   ? help · ctrl+p commands · q quit · Esc/Backspace back
[b]Runs[/b]         ↑↓ move · Enter open · c cancel · n new run (detached) · s sort
             f status filter · / search
[b]Run[/b]          ↑↓ move · Enter open step · c cancel (press again to escalate)
[b]Step[/b]         e executions · l log · p params · o outputs · f failures only
             Enter on an execution shows its log; on an output opens the artifact
[b]Artifact[/b]     u made from · d made into · v preview · Enter follows lineage

[b]Cancel[/b] — each press of c asks for one level more (the bar says what the next does):
  1 graceful: no new work; running units finish and are committed
  2 force: queued units dropped; running workers terminated (SLURM: scancel)
  3 hard: everything killed now; staged work is committed on the next start
The same levels as `stemma cancel RUN --level N` and Ctrl-C pressed 1 to 3 times.

[b]Status[/b] — stale: the run's heartbeat stopped (its orchestrator died); `stemma reap RUN`.
"""


class HelpScreen(ModalScreen[None]):
    """A page of keys over the current screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "app.pop_screen", "Close"),
    ]

    def compose(self) -> ComposeResult:
        """The help text, scrollable on a small terminal."""
        with VerticalScroll(id="help"):
            yield Static(HELP, id="help-text")
