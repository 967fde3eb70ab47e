"""The dashboard's own widgets and how its table cells look."""

from stemma.tui.widgets.cancel_bar import CancelBar, cancel_message, next_level

__all__ = ["CancelBar", "cancel_message", "next_level"]
