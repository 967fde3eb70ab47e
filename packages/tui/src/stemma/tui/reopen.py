"""The command that opens the dashboard where it is now, fitted to a header line.

Each screen's header shows it (``stemma tui --root /p RUN --step 2``), so a user can reopen the
same screen later, in another terminal, or over a slower link with ``--once``. Pure functions:
the title widget calls them on every resize.
"""

from __future__ import annotations

import shlex
from pathlib import Path

ELLIPSIS = "…"


def reopen_command(
    root: Path | str,
    run_id: str | None = None,
    step: int | None = None,
    *,
    width: int | None = None,
) -> str:
    """``stemma tui --root ROOT [RUN [--step N]]``, its root shortened from the left to fit.

    The step is given by number: names may repeat within a run (a step run twice), numbers
    never do, and ``--step`` takes either.

    Args:
        root: the root, as the dashboard was given it.
        run_id: the run on screen, if any.
        step: the number of the step on screen, if any (needs ``run_id``).
        width: the columns the command must fit in; None for the whole command. Only the
            root is shortened (``…/project/.stemma``): the run id and the step are what the
            command is for. A command that cannot fit even so is returned with the root cut
            to its last few characters, and the caller's line crops it.
    """
    tail = [run_id] if run_id else []
    if run_id and step is not None:
        tail += ["--step", str(step)]
    whole = _command(shlex.quote(str(root)), tail)
    if width is None or len(whole) <= width:
        return whole
    spare = width - len(_command("", tail))  # the columns the root may take
    return _command(shorten_left(str(root), max(spare, len(ELLIPSIS) + 4)), tail)


def shorten_left(text: str, width: int) -> str:
    """``text`` in ``width`` characters, cut from the left: ``…/project/.stemma``.

    The end of a path is the part that tells roots apart (the project, ``.stemma``).
    """
    if len(text) <= width:
        return text
    return ELLIPSIS + text[len(text) - (width - len(ELLIPSIS)) :]


def header_text(label: str, command: str, width: int) -> str:
    """One header line: ``label`` on the left, ``command`` on the right when both fit.

    When they do not, the command alone: it names the run and the step too.
    """
    gap = width - len(label) - len(command)
    if gap >= 3:
        return label + " " * gap + command
    return command


def _command(root: str, tail: list[str]) -> str:
    return " ".join(["stemma tui --root", root, *tail])
