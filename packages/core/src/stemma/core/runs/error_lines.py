"""One line of an error, for the places that show an execution's error in a table cell.

An execution's recorded error is the whole traceback, so its first line is always
``Traceback (most recent call last):``, which tells a reader nothing. What tells them something
is the exception's own line (``ValueError: bad row 3``), which a traceback prints after its
last frame. The command line and the dashboard both cut errors through :func:`error_line`, so a
failure reads the same in ``stemma`` output and on the dashboard's screens.
"""

from __future__ import annotations

TRACEBACK_HEADER = "Traceback (most recent call last):"
_CHAINING = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)


def error_line(text: str | None, width: int | None = None) -> str:
    """The line of ``text`` that says what went wrong, cut to ``width`` characters.

    For a traceback, the exception's line after the last frame (the exception that ended the
    execution, when several were chained); for any other text, its first non-blank line.
    Empty for no text.
    """
    lines = [line.rstrip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return ""
    line = _exception_line(lines) if TRACEBACK_HEADER in lines else lines[0]
    line = line.strip()
    if width is not None and len(line) > width:
        return line[: max(width - 1, 0)] + "…"
    return line


def _exception_line(lines: list[str]) -> str:
    """The first unindented line after the last traceback's frames.

    Frames (``  File "…", line 3, in f``), their source lines and ``^^^`` markers are indented;
    the exception's message starts at the first line that is not, and a multi-line message
    (pydantic's) keeps its headline there.
    """
    start = len(lines) - 1 - lines[::-1].index(TRACEBACK_HEADER)
    for line in lines[start + 1 :]:
        if not line[:1].isspace() and line not in _CHAINING:
            return line
    return lines[-1]  # an exception group's lines are all indented: its last says most
