"""One cold dashboard session, headless, in its own process: ``bench_dashboard.py`` starts it.

    python benchmarks/dashboard_session.py ROOT SPAWNED_AT IDLE REPEATS [--profile]

It drives the real app with ``App.run_test()`` at 160x48 and prints its figures as one JSON line:

- first paint: from ``SPAWNED_AT`` (the parent's clock just before it started this process) to
  the end of the first frame drawn with rows in the runs table, outside the app's start-up
  batch (whose frames never reach a terminal); ``rows_s`` stops at the rows being in the
  table, as this figure did before;
- settled: until the first full read of the history (after the paint) is done too;
- runs refresh: ``refresh_runs()`` after a commit to the steps table (a step event of the
  watched run, so the store keeps its 1,000 runs) until the redraw is done;
- run refresh: the watched run's ``refresh_run()`` after such a commit, until it is redrawn;
- runs list idle CPU: this process's CPU time over ``IDLE`` seconds with the runs list open
  (1,000 runs, 44 on screen) and the watched run running: its duration ticks, its poll reads;
- idle CPU: this process's CPU time over ``IDLE`` seconds with the running run's screen open.

CPU times are ``time.process_time`` (every thread of this process; for the first paint, from
the process's start). Nothing but the app is imported before the paint: the store-writing
module loads after it, so the figure is the dashboard's own.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEADLINE_SECONDS = 120.0


async def drive(root: Path, spawned_at: float, idle: float, repeats: int) -> dict[str, Any]:
    """The real app, headless; returns the figures."""
    imported = time.time()
    from stemma.tui.app import StemmaApp

    after_import = time.time()
    painted: list[tuple[float, float]] = []
    watch_first_frame(painted)
    app = StemmaApp(root)
    figures: dict[str, Any] = {"import_s": after_import - imported}
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: rows(app, "#runs") > 0)
        figures["rows_s"] = time.time() - spawned_at
        await until(pilot, lambda: bool(painted))
        (at, cpu), *_ = painted
        figures["first_paint_s"] = at - spawned_at
        figures["first_paint_cpu_s"] = cpu  # this process's, from its start
        figures["mount_to_paint_s"] = at - after_import
        from dashboard_store import LIVE_RUN, STEPS, commit_step_event
        from textual.widgets import Static

        from stemma.tui.screens import RunScreen, RunsScreen
        from stemma.tui.widgets.tables import table_at

        screen = app.screen
        assert isinstance(screen, RunsScreen)
        # The first history read, after the paint: the summary says "reading the rest…" until
        # it is done. (Waiting for no worker to run is not enough: the read may not have
        # started yet, and the first refresh would then time it.)
        summary = screen.query_one("#summary", Static)
        await until(pilot, lambda: "reading the rest" not in str(summary.render()))
        await settle(app, pilot)
        figures["settled_s"] = time.time() - spawned_at
        figures["runs_shown"] = len(screen.rows)
        assert any(row.run_id == LIVE_RUN and row.status.value == "running" for row in screen.rows)
        figures["runs_idle_cpu_percent"] = await idle_cpu_percent(pilot, idle)
        refreshes: list[float] = []
        refresh_cpu: list[float] = []
        for _ in range(repeats):
            commit_step_event(root)
            cpu, t0 = time.process_time(), time.perf_counter()
            screen.refresh_runs()
            await settle(app, pilot)  # the worker is done and its rows are drawn
            refreshes.append(time.perf_counter() - t0)
            refresh_cpu.append(time.process_time() - cpu)
        figures["runs_refresh_s"] = refreshes
        figures["runs_refresh_cpu_s"] = refresh_cpu
        app.open_run(LIVE_RUN)
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and rows(app, "#steps") > 0)
        run_screen = app.screen
        assert isinstance(run_screen, RunScreen)
        run_refreshes: list[float] = []
        run_cpu: list[float] = []
        for _ in range(repeats):
            run_screen.view = None
            commit_step_event(root)
            cpu, t0 = time.process_time(), time.perf_counter()
            run_screen.refresh_run()
            await until(pilot, lambda: run_screen.view is not None)
            await pilot.pause()  # drawn
            run_refreshes.append(time.perf_counter() - t0)
            run_cpu.append(time.process_time() - cpu)
        figures["run_refresh_s"] = run_refreshes
        figures["run_refresh_cpu_s"] = run_cpu
        assert table_at(run_screen, "#steps").row_count == len(STEPS)
        await settle(app, pilot)
        figures["idle_cpu_percent"] = await idle_cpu_percent(pilot, idle)
    return figures


async def idle_cpu_percent(pilot: Any, seconds: float) -> float:
    """This process's CPU time over ``seconds`` of the app left alone, in percent of a core."""
    cpu, wall = time.process_time(), time.perf_counter()
    await pilot.pause(seconds)
    return 100 * (time.process_time() - cpu) / (time.perf_counter() - wall)


def watch_first_frame(painted: list[tuple[float, float]]) -> None:
    """Note the clock and CPU time when the first frame with run rows is drawn.

    Textual draws a frame in ``Screen._compositor_refresh`` (headless, it renders it and writes
    it nowhere); while ``App._batch_count`` is up (the app's start-up), a real terminal gets
    nothing. Both are private: a Textual that renames them fails here, loudly.
    """
    from textual.screen import Screen

    draw: Any = getattr(Screen, "_compositor_refresh")  # noqa: B009 (private, on purpose)

    def drawn(screen: Any) -> None:
        draw(screen)
        app: Any = screen.app
        batched = app._batch_count
        if not painted and not batched and screen is app.screen and rows(app, "#runs") > 0:
            painted.append((time.time(), time.process_time()))

    setattr(Screen, "_compositor_refresh", drawn)  # noqa: B010 (a private name, on purpose)


async def settle(app: Any, pilot: Any) -> None:
    """Until no worker runs, then until the messages they posted are handled."""
    while any(worker.is_running for worker in app.workers):
        await pilot.pause(0.002)
    await pilot.pause()


def rows(app: Any, selector: str) -> int:
    """Rows of the table ``selector`` on the current screen (0 while it is not there)."""
    from textual.widgets import DataTable

    return next((t.row_count for t in app.screen.query(selector) if isinstance(t, DataTable)), 0)


async def until(pilot: Any, condition: Callable[[], bool]) -> None:
    """Let the app run until ``condition`` holds (5 ms steps); fail after a deadline."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the dashboard did not get there")
        await pilot.pause(0.005)


def main(argv: list[str]) -> None:
    """``ROOT SPAWNED_AT IDLE REPEATS [--profile]``: one session; its figures on stdout."""
    root, spawned_at, idle, repeats = Path(argv[0]), float(argv[1]), argv[2], argv[3]
    run = drive(root, spawned_at, float(idle), int(repeats))
    if "--profile" in argv:  # the event loop's thread only: the workers' reads are apart
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        figures = profiler.runcall(asyncio.run, run)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
        print(out.getvalue(), file=sys.stderr)
    else:
        figures = asyncio.run(run)
    import json

    print(json.dumps(figures))


if __name__ == "__main__":
    main(sys.argv[1:])
