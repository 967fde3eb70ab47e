"""``r`` on a stale run: the command a resume runs again, shown, to start with Enter.

A resume starts a recorded command line (maybe hours of cluster work) in a new session: the
dialog shows exactly what, where and on which root and backend before anything starts, as
``n`` shows the ``stemma run --detach`` line it runs.
"""

from __future__ import annotations

import shlex
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from stemma.core.runs.launching import BACKEND_ENV
from stemma.core.runs.relaunch import Relaunch
from stemma.core.store.locations import ROOT_ENV

HINT = "Enter resumes it · Esc cancels"


def resume_text(run_id: str, relaunch: Relaunch) -> str:
    """What the dialog says: the run, the command line, and the root and backend it runs on."""
    on = ", ".join(
        f"{label} {shlex.quote(relaunch.env[name])}"
        for label, name in (("root", ROOT_ENV), ("backend", BACKEND_ENV))
        if name in relaunch.env
    )
    return f"runs again, detached, on {on}:\n{relaunch.shown()}"


class ResumeScreen(ModalScreen[bool]):
    """Shows a stale run's recorded command; dismisses with True on Enter, False on Esc."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "dismiss_with(True)", "Resume"),
        Binding("escape", "dismiss_with(False)", "Cancel"),
    ]

    def __init__(self, run_id: str, relaunch: Relaunch) -> None:
        """Ask before resuming ``run_id`` with ``relaunch``."""
        super().__init__()
        self.run_id = run_id
        self.relaunch = relaunch

    def compose(self) -> ComposeResult:
        """The run, its command (the launch dialog's look), and the keys."""
        with Vertical(id="launch"):
            yield Static(f"Resume run {self.run_id}? Its recorded command", markup=False)
            yield Static(resume_text(self.run_id, self.relaunch), id="command", markup=False)
            yield Static(HINT, classes="summary")

    def action_dismiss_with(self, resume: bool) -> None:
        """Close: resume (True) or not."""
        self.dismiss(resume)
