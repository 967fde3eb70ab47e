"""One headless filter session on a runs list of 10,000 runs: ``bench_dashboard.py`` starts it.

    python benchmarks/dashboard_filter.py ROOT RUNS REPEATS

Issue 18's budget: a filter keystroke on a 10,000-row table repaints in under 50 ms. The real
app runs under ``App.run_test()`` at 160x48 on a root of ``RUNS`` runs (``dashboard_store.
build_state_runs``: the oldest tenth named ``zeta``, the only rows with a ``z``). Once every
run is in the table, ``/`` opens the filter, then each keystroke is timed from just before it
is sent to the end of the first frame drawn with its outcome: the filter box showing the text
typed so far and the table holding the rows that pass. The keystrokes, ``REPEATS`` times:

- ``z``: 10,000 rows to 1,000 (every row matched, a tenth kept);
- ``e``: ``ze``, the same 1,000 rows (matched again, nothing to redraw but the box);
- backspace: ``z``, the same 1,000 rows;
- backspace: the empty filter, all 10,000 rows back (the largest redraw).

Each figure is a list, one entry per repetition, of wall and CPU seconds (``process_time``:
every thread of this process). Printed as one JSON line. Only the public behaviour is used
(``/`` and typing); the frame hook is the same private one as ``dashboard_session.py``'s.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from dashboard_session import rows, settle, until

KEYSTROKES = (("z", "z", 10), ("e", "ze", 10), ("backspace", "z", 10), ("backspace", "", 1))
"""(key, the filter's text after it, the rows left as a fraction: 1/N of every run)."""


async def drive(root: Path, runs: int, repeats: int) -> dict[str, Any]:
    """The real app, headless; returns the figures."""
    from textual.widgets import Input

    from stemma.tui.app import StemmaApp

    frames: list[tuple[float, float, int, str]] = []
    watch_frames(frames)
    app = StemmaApp(root)
    figures: dict[str, Any] = {}
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: rows(app, "#runs") == runs)
        await settle(app, pilot)
        await pilot.press("slash")
        await until(pilot, lambda: isinstance(app.focused, Input))
        await settle(app, pilot)
        for _ in range(repeats):
            for key, text, fraction in KEYSTROKES:
                expected = runs // fraction
                frames.clear()
                cpu, t0 = time.process_time(), time.perf_counter()
                await pilot.press(key)

                def shown(text: str = text, expected: int = expected) -> bool:
                    return any(f[2] == expected and f[3] == text for f in frames)

                await until(pilot, shown)
                at, cpu_at, _, _ = next(f for f in frames if f[2] == expected and f[3] == text)
                figures.setdefault(f"{key} -> {text!r} wall_s", []).append(at - t0)
                figures.setdefault(f"{key} -> {text!r} cpu_s", []).append(cpu_at - cpu)
                await settle(app, pilot)
    return figures


def watch_frames(frames: list[tuple[float, float, int, str]]) -> None:
    """After each frame drawn: (clock, CPU, rows in ``#runs``, text in the focused input).

    ``Screen._compositor_refresh`` is Textual's private frame; a Textual that renames it
    fails here, loudly (see ``dashboard_session.watch_first_frame``).
    """
    from textual.screen import Screen
    from textual.widgets import Input

    draw: Any = getattr(Screen, "_compositor_refresh")  # noqa: B009 (private, on purpose)

    def drawn(screen: Any) -> None:
        draw(screen)
        app: Any = screen.app
        if app._batch_count or screen is not app.screen:
            return  # frames of a batch never reach a terminal
        focused = app.focused
        typed = focused.value if isinstance(focused, Input) else "<no input focused>"
        frames.append((time.perf_counter(), time.process_time(), rows(app, "#runs"), typed))

    setattr(Screen, "_compositor_refresh", drawn)  # noqa: B010 (a private name, on purpose)


def main(argv: list[str]) -> None:
    """``ROOT RUNS REPEATS``: one session; its figures on stdout."""
    root, runs, repeats = Path(argv[0]), int(argv[1]), int(argv[2])
    print(json.dumps(asyncio.run(drive(root, runs, repeats))))


if __name__ == "__main__":
    main(sys.argv[1:])
