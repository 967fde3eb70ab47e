"""``stemma tui --readonly``: no launch (n), no cancel (c), on any screen, by any way in.

A running run (a state file whose pid is this test's) gives ``c`` something to cancel; with
Pilot at 80x24 and 160x48, and in tmux through the command line.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.pilot import Pilot

from stemma.core.live import run_dir
from stemma.core.live.control import CONTROL_DIR
from stemma.tui.app import StemmaApp
from stemma.tui.screens import HelpScreen, LaunchScreen, RunScreen, RunsScreen

from .conftest import live_state, row_count, until
from .test_open_where import SIZES, TERMINAL_ENV
from .test_snapshots import screen_text
from .test_terminal import STEMMA, Terminal

RUN = "live_20261129_120000_0000abcd"


def _requests(root: Path) -> list[Path]:
    """The cancel requests the dashboard wrote for the run."""
    control = run_dir(root, RUN) / CONTROL_DIR
    return sorted(control.iterdir()) if control.is_dir() else []


def _palette(app: StemmaApp) -> list[str]:
    return [command.title for command in app.get_system_commands(app.screen)]


def _keys_listed(app: StemmaApp) -> set[str]:
    """The keys Textual's keys panel lists on this screen (enabled, not system bindings)."""
    active = app.screen.active_bindings
    return {key for key, bound in active.items() if bound.enabled and not bound.binding.system}


async def _footer_says(app: StemmaApp, pilot: Pilot[None], key: str) -> bool:
    await until(pilot, lambda: "palette" in screen_text(app), "the footer")
    return key in screen_text(app).splitlines()[-1]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("readonly", [False, True], ids=["normal", "readonly"])
def test_readonly_hides_and_disables_launch_and_cancel_on_every_screen(
    tmp_path: Path, size: tuple[int, int], readonly: bool
) -> None:
    root = tmp_path / "store"
    live_state(root, RUN)

    async def play() -> None:
        app = StemmaApp(root, readonly=readonly)
        async with app.run_test(size=size, notifications=True) as pilot:
            await until(pilot, lambda: row_count(app, "#runs") == 1, "the running run")
            assert isinstance(app.screen, RunsScreen)
            assert await _footer_says(app, pilot, "Cancel") is not readonly
            assert ("New run" in _palette(app)) is not readonly
            assert ("Cancel run" in _palette(app)) is not readonly
            assert {"c", "n"} & _keys_listed(app) == (set() if readonly else {"c", "n"})
            await pilot.press("n")
            await pilot.pause(0.2)
            assert isinstance(app.screen, LaunchScreen) is not readonly
            if not readonly:
                await pilot.press("escape")
            await pilot.press("question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
            await pilot.pause(0.2)
            shown = screen_text(app)
            assert ("n new run" in shown) is not readonly
            assert ("c cancel" in shown) is not readonly
            assert ("Read-only" in shown) is readonly
            await pilot.press("escape")
            app.open_run(RUN)
            await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run")
            await until(pilot, lambda: row_count(app, "#steps") == 2, "its steps")
            assert await _footer_says(app, pilot, "Cancel") is not readonly
            assert ("Cancel run" in _palette(app)) is not readonly
            assert ("c" in _keys_listed(app)) is not readonly
            await pilot.press("c")
            await pilot.pause(0.5)
            assert (_requests(root) == []) is readonly
            if readonly:
                await until(pilot, lambda: "read-only" in screen_text(app), "the read-only note")

    asyncio.run(play())


def test_stemma_tui_readonly_in_tmux_sends_no_cancel(tmp_path: Path) -> None:
    root = tmp_path / "store"
    live_state(root, RUN)
    terminal = Terminal(f"{STEMMA} tui --readonly --root {root} {RUN}", TERMINAL_ENV)
    try:
        shown = terminal.wait_for(lambda s: "transform" in s and "palette" in s, "the run")
        assert "Cancel" not in shown.splitlines()[-1]
        terminal.keys("c")
        terminal.wait_for(lambda s: "read-only" in s, "the read-only note")
        terminal.keys("q")
    finally:
        terminal.close()
    assert _requests(root) == []
