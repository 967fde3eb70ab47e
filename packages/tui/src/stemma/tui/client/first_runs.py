"""The runs a first screen shows, read before the dashboard draws anything, within a time limit.

Reading the newest state files takes ~30 ms on a root of 1,000 runs when nothing else runs. In
a thread worker beside Textual's first frames it took ~0.24 s: each ``stat`` and ``open`` gave
up the interpreter lock, and the busy event loop kept it up to 5 ms before handing it back. And
those first frames showed an empty table, drawn once more when the rows came. Read before the
app starts, the first frame already has the rows.
"""

from __future__ import annotations

import shutil
import threading

from stemma.core.runs.run_rows import RunRow
from stemma.tui.client.dashboard import DashboardClient

FIRST_SCREEN_RUNS = 50
"""Runs read for the first frame, before all the others, unless the terminal is taller: more
than a 48-line terminal shows (each row read and laid out costs ~0.5 ms)."""
FIRST_READ_SECONDS = 0.5
"""How long the first frame waits for them; on a disk slower than that, the runs screen shows
at once and its worker reads them."""


def first_screen_runs() -> int:
    """How many runs the first frame needs: :data:`FIRST_SCREEN_RUNS`, or the terminal's lines."""
    return max(FIRST_SCREEN_RUNS, shutil.get_terminal_size().lines)


def read_first_runs(
    client: DashboardClient,
    *,
    newest: int | None = None,
    timeout: float | None = None,
) -> list[RunRow] | None:
    """The ``newest`` runs with a state file, newest first; None if not read within ``timeout``.

    ``newest`` defaults to :func:`first_screen_runs`, ``timeout`` to :data:`FIRST_READ_SECONDS`.

    The read runs in a thread joined with a timeout, so a hung network file system delays the
    dashboard by ``timeout`` at most instead of keeping it from showing at all. A read that
    fails also gives None: the runs screen's worker reads again and reports the error.
    """
    found: list[list[RunRow]] = []
    count = first_screen_runs() if newest is None else newest

    def read() -> None:
        try:
            found.append(client.live_runs(count))
        except Exception:
            return

    reader = threading.Thread(target=read, name="stemma-first-runs", daemon=True)
    reader.start()
    reader.join(FIRST_READ_SECONDS if timeout is None else timeout)
    return found[0] if found else None
