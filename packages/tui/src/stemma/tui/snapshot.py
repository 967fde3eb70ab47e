"""``stemma tui --once``: the dashboard's screen as plain text, for scripts and slow links.

The real app runs headless (no terminal needed, nothing drawn), opens the screen asked for,
waits until its data is on it, and hands back what it shows: the same rows and words as on a
terminal, without colours or escape codes.
"""

from __future__ import annotations

import io
import re
import shutil
import time
from typing import cast

from rich.console import Console
from textual.pilot import Pilot
from textual.screen import Screen

from stemma.tui.app import StemmaApp

DEFAULT_SIZE = (120, 40)
"""Columns and lines when neither ``--size``, ``$COLUMNS``/``$LINES`` nor a terminal says."""
LOADING = ("loading runs…", "loading…", "reading the rest…")
"""What the screens show until their data is read: the snapshot waits for these to go."""
WAIT_SECONDS = 30.0
"""How long the data may take to load before the screen is printed as it is."""
SETTLE_SECONDS = 0.1
"""The pause between two looks at the screen: it is done when two looks agree."""


def terminal_size(given: str | None) -> tuple[int, int]:
    """``--size WxH``, else ``$COLUMNS``x``$LINES`` or the terminal's, else 120x40.

    Raises:
        ValueError: ``given`` is not ``WIDTHxHEIGHT`` with both at least 20x5.
    """
    if given is None:
        columns, lines = shutil.get_terminal_size(DEFAULT_SIZE)  # reads $COLUMNS/$LINES first
        return max(columns, 20), max(lines, 5)
    found = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", given)
    if found is None or int(found[1]) < 20 or int(found[2]) < 5:
        raise ValueError(f"--size {given!r}: give WIDTHxHEIGHT, at least 20x5, e.g. 120x40")
    return int(found[1]), int(found[2])


def screen_text(app: StemmaApp) -> str:
    """What the app's screen shows, as plain text: one line per terminal line, right-trimmed."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), color_system=None)
    console.record = True
    # The compositor's full update is the frame a terminal would get; rendered by a console
    # without colours it is the screen's text (Textual's own screenshots render it this way).
    # The screens below go with it: a dialog's see-through background draws them whenever its
    # cached lines are redrawn, and without them it draws blank where the runs list shows.
    below = cast("list[Screen[object]]", app._background_screens)  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType]
    update: object = app.screen._compositor.render_update(full=True, screen_stack=below)  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType]
    console.print(update)
    lines = console.export_text(styles=False).splitlines()
    return "\n".join(line.rstrip() for line in lines) + "\n"


def snapshot(app: StemmaApp, size: tuple[int, int], wait: float = WAIT_SECONDS) -> tuple[str, bool]:
    """Run ``app`` headless at ``size`` until its screen has loaded; its text, and whether it did.

    Args:
        app: the dashboard, opened where the snapshot is of.
        size: columns and lines.
        wait: seconds to wait for the data before taking the screen as it is.
    """
    taken: list[tuple[str, bool]] = []

    async def take(pilot: Pilot[object]) -> None:
        loaded = await _until_loaded(app, pilot, wait)
        taken.append((screen_text(app), loaded))
        app.exit()

    app.animation_level = "none"  # nothing to animate in a snapshot: no frames to wait for
    app.run(headless=True, size=size, auto_pilot=take)
    if not taken:
        raise RuntimeError("the dashboard stopped before its screen could be read")
    return taken[0]


async def _until_loaded(app: StemmaApp, pilot: Pilot[object], wait: float) -> bool:
    """Wait until start-up is over, the screen shows no loading words, and two looks agree.

    Not until the workers are idle: the screens poll every second or two, and on a busy
    machine a read can take that long, so some worker is nearly always reading.
    """
    deadline = time.monotonic() + wait
    before = ""
    while time.monotonic() < deadline:
        await pilot.pause(SETTLE_SECONDS)
        text = screen_text(app)
        if text == before and app.ready and not any(word in text for word in LOADING):
            return True
        before = text
    return False
