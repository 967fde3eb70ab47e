"""The line that shows what each press of ``c`` asked for, and what the next press will do."""

from __future__ import annotations

from textual.widgets import Static

from stemma.core.cancel_levels import CancelLevel


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


class CancelBar(Static):
    """Hidden until a cancel was asked for or applied; then one line, in warning colours."""

    DEFAULT_CLASSES = "cancel-bar"
    _message: str | None = None

    def show_levels(self, applied: int, pressed: int) -> None:
        """Show the state of the escalation (or hide the bar when nothing was asked)."""
        message = cancel_message(applied, pressed)
        if message != self._message:  # every update repaints, and the run screen asks each second
            self._message = message
            self.update(message)
        self.display = bool(message)
