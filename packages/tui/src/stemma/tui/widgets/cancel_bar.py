"""The line that shows what each press of ``c`` asked for, and what the next press will do."""

from __future__ import annotations

from textual.widgets import Static

from stemma.core.cancel_levels import CancelLevel
from stemma.core.live import RunStatus


def next_level(applied: int, pressed: int) -> CancelLevel | None:
    """The level the next press asks for: one above both what was applied and what was asked."""
    level = max(applied, pressed) + 1
    return CancelLevel(level) if level <= CancelLevel.HARD else None


SHORT = {
    CancelLevel.GRACEFUL: "graceful (no new work; running units finish and commit)",
    CancelLevel.FORCE: "force (queued units dropped; workers terminated)",
    CancelLevel.HARD: "hard (everything killed now)",
}
"""Each level in few enough words that the bar fits 80 columns."""


def cancel_message(applied: int, pressed: int) -> str:
    """What the bar says after ``pressed`` presses on a run at ``applied`` level: two lines."""
    current = max(applied, pressed)
    upcoming = next_level(applied, pressed)
    if current == 0:
        return ""
    said = f"cancel {current}/3 asked: {SHORT[CancelLevel(current)]}"
    if upcoming is None:
        return f"{said}\nnothing stronger left"
    return f"{said}\npress c again for {SHORT[upcoming]}"


def how_it_ended(status: RunStatus, applied: int) -> str:
    """An ended run's status as its header says it: ``cancelled at force``; empty while running.

    The level is the one its orchestrator applied, not what was pressed: presses that came
    after the run ended asked for nothing.
    """
    if status is RunStatus.RUNNING:
        return ""
    if status is RunStatus.CANCELLED and applied:
        return f"cancelled at {CancelLevel(min(applied, CancelLevel.HARD)).name.lower()}"
    if status is RunStatus.STALE:
        return "stale (orchestrator gone)"
    return status.value


class CancelBar(Static):
    """Hidden until a cancel was asked for or applied; then one line, in warning colours.

    Only while the run runs: an ended run has nothing left to cancel (its header says how it
    ended), so no next press is offered.
    """

    DEFAULT_CLASSES = "cancel-bar"
    _message: str | None = None

    def show_levels(
        self, applied: int, pressed: int, status: RunStatus = RunStatus.RUNNING
    ) -> None:
        """Show the state of the escalation (or hide the bar when nothing was asked)."""
        running = status is RunStatus.RUNNING
        message = cancel_message(applied, pressed) if running else ""
        if message != self._message:  # every update repaints, and the run screen asks each second
            self._message = message
            self.update(message)
        self.display = bool(message)
