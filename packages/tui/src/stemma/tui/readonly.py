"""``stemma tui --readonly``: one rule for what a shared dashboard may not do.

A dashboard left open on a shared screen, or opened by a colleague to look, should not start
or cancel runs with a stray key. The app's :meth:`~stemma.tui.app.StemmaApp.allows` applies
:func:`allowed` to every screen's keys through Textual's ``check_action`` (a disabled action is
neither shown in the footer nor run), the command palette leaves the same commands out, and the
help page drops their keys with :func:`readonly_help`.
"""

from __future__ import annotations

import re

HIDDEN_ACTIONS = frozenset({"launch", "cancel_run"})
"""The screens' actions that start or cancel a run (``n`` and ``c``)."""
HIDDEN_KEYS = ("c", "n")
"""Their keys, as the help page names them."""
READONLY_NOTE = (
    "[b]Read-only[/b] (--readonly): c (cancel) and n (new run) are off; "
    "`stemma cancel RUN` still cancels from a shell."
)

_KEY_ITEM = re.compile(rf"^\s*(?:{'|'.join(HIDDEN_KEYS)})\s")


def allowed(action: str, *, readonly: bool) -> bool:
    """Whether the screens' ``action`` may run (and be shown)."""
    return not (readonly and action in HIDDEN_ACTIONS)


def readonly_help(text: str) -> str:
    """The help page without the keys read-only mode turns off, and saying why.

    Keys are listed as ``·``-separated items (``c cancel · n new run``): the items that start
    with a hidden key go, and so does the paragraph about cancelling (from ``[b]Cancel[/b]``
    to the next blank line), which the note replaces.
    """
    kept: list[str] = []
    skipping = False
    for line in text.splitlines():
        if line.startswith("[b]Cancel[/b]"):
            skipping = True
            kept.append(READONLY_NOTE)
            continue
        if skipping:
            skipping = bool(line.strip())
            if skipping:
                continue
        items = [item for item in line.split(" · ") if not _KEY_ITEM.match(item)]
        if line.strip() and not "".join(items).strip():
            continue  # a line of hidden keys only
        kept.append(" · ".join(items))
    return "\n".join(kept) + "\n"
