"""The ``/`` box above a table: the same filter, keys and messages on every screen.

A screen mounts one hidden :class:`FilterBox` above its table, binds ``/`` to :meth:`open`
and reacts to :class:`FilterBox.Filtered` (each keystroke) and :class:`FilterBox.Done` (Enter
or Escape: give the table its focus back). Escape also clears the filter, as in k9s and less.
What a row is matched on is the screen's business; the rule is :class:`~..row_filter.RowFilter`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input

from stemma.tui.row_filter import RowFilter

PLACEHOLDER = "filter: text or regex, ! to invert · Enter keeps it · Esc clears"


class FilterBox(Input):
    """A one-line filter; hidden until :meth:`open`."""

    # Compact: one line with no border, focused or not (a focused Input's border took 3 rows).
    DEFAULT_CSS = """
    FilterBox { display: none; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Clear filter", show=False),
    ]

    class Filtered(Message):
        """The filter changed (each keystroke, and when cleared)."""

        def __init__(self, box: FilterBox, row_filter: RowFilter) -> None:
            super().__init__()
            self.box = box
            self.row_filter = row_filter

    class Done(Message):
        """Typing is over (Enter or Escape): the table should take the focus back."""

        def __init__(self, box: FilterBox) -> None:
            super().__init__()
            self.box = box

    def __init__(self, *, id: str | None = None, placeholder: str = PLACEHOLDER) -> None:
        super().__init__(placeholder=placeholder, id=id, compact=True)
        self.row_filter = RowFilter()
        # Focusable only while shown: a screen's first focus (and Tab) must not land in a
        # hidden box and swallow the keys meant for its table.
        self.can_focus = False

    def open(self) -> None:
        """Show the box (with what was typed before) and type into it."""
        self.display = True
        self.can_focus = True
        self.focus()

    def close_or(self, otherwise: Callable[[], object]) -> None:
        """Escape on a screen: clear the filter if one is typed or shown, else ``otherwise()``.

        One press undoes the filter before the next one leaves the screen, on every screen.
        """
        if self.row_filter.active or self.display:
            self.action_close()
        else:
            otherwise()

    def action_close(self) -> None:
        """Clear the filter, hide the box, hand the focus back."""
        self.value = ""  # posts Input.Changed, hence Filtered with an empty filter
        self._hide()
        self.post_message(self.Done(self))

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        row_filter = RowFilter.parse(event.value)
        if row_filter != self.row_filter:
            self.row_filter = row_filter
            self.post_message(self.Filtered(self, row_filter))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.row_filter.active:
            self._hide()
        self.post_message(self.Done(self))

    def _hide(self) -> None:
        self.display = False
        self.can_focus = False
