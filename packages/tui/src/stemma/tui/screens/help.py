"""``?``: every key of every screen on one page, readable at 80x24.

A test reads each screen's bindings and checks the page names every key under that screen's
label (or under Everywhere): a key added to a screen must be added here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from stemma.tui.readonly import readonly_help

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp

HELP = """\
[b]stemma dashboard[/b]: keyboard first. Esc or ? closes this page.

[b]Everywhere[/b]  ? help · ctrl+p commands · q quit · Esc back
[b]Runs[/b]        Enter open · c cancel · n new run · s sort
[b]Run[/b]         Enter open a step · c cancel (again: harder)
[b]Runs, Run[/b]   x failed · r running · a all · f cycle · / filter
[b]Step[/b]        e executions · l log · p params · o outputs
            w why · x failed · r running · / filter · f follow
            Enter: an execution's log, or an output artifact
[b]Artifact[/b]    u made from · d made into · v preview · / filter
            Enter follows the lineage

[b]Cancel[/b]: each press of c asks for one level more;
the bar says what the next press does.
  1 graceful: no new work; running units finish, commit
  2 force: queued units dropped; workers terminated
  3 hard: everything killed; staged work commits later
Same levels as `stemma cancel RUN --level N` and Ctrl-C.

[b]stale[/b]: its orchestrator died; its screen's r resumes it,
`stemma reap RUN` settles it. cncl: cancelled units.
"""


class HelpScreen(ModalScreen[None]):
    """A page of keys over the current screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "app.pop_screen", "Close"),
    ]

    def compose(self) -> ComposeResult:
        """The help text, scrollable on a small terminal."""
        with VerticalScroll(id="help"):
            readonly = cast("StemmaApp", self.app).readonly  # stemma tui --readonly
            yield Static(readonly_help(HELP) if readonly else HELP, id="help-text")
