"""Whether a screen is on view, so the ones hidden under another stop polling."""

from __future__ import annotations

from typing import Any, cast

from textual.app import App, ScreenStackError
from textual.screen import ModalScreen, Screen


def showing(screen: Screen[Any]) -> bool:
    """The screen is the top one, or shows through a modal (help, launch) on top of it.

    Textual's ``Screen.is_current`` also counts the screen just under a full one as current,
    which would keep a hidden runs list re-reading and redrawing 1,000 rows every second.
    """
    try:
        top = cast("App[object]", screen.app).screen
    except ScreenStackError:  # the app is closing
        return False
    return top is screen or (isinstance(top, ModalScreen) and screen.is_current)
