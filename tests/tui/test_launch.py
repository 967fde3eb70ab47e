"""``n`` takes a script and its arguments, shows the command it runs, and says why a launch failed.

Launches are real: ``stemma run --detach`` in its own session, as the command line starts it.
Toasts are off in ``run_test`` by default: the tests that read them turn them on.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static
from textual.widgets._toast import Toast

from stemma.core.live import list_states
from stemma.tui.app import StemmaApp
from stemma.tui.messages import LaunchFailed
from stemma.tui.screens import LaunchScreen, RunsScreen
from stemma.tui.screens.launch import command_preview

from .conftest import Scenario, until
from .test_snapshots import screen_text

ARGS_SCRIPT = """
import sys

from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("args", max_workers=1)
    pipeline.run(DataGenerator, params={"count": int(sys.argv[1]), "rows": 2})
    pipeline.finalize()
"""
FAILING_SCRIPT = """
raise ValueError("no such day: 2026-13-01")
"""


def drive(root: Path, scenario: Scenario, size: tuple[int, int] = (100, 30)) -> None:
    """The real app with its toasts shown, playing ``scenario``."""

    async def play() -> None:
        app = StemmaApp(root)
        async with app.run_test(size=size, notifications=True) as pilot:
            await scenario(app, pilot)

    asyncio.run(play())


def _toasts(app: StemmaApp) -> str:
    return "\n".join(str(toast.render()) for toast in app.screen.query(Toast))


def _toast_heights(app: StemmaApp, saying: str) -> list[int]:
    """The heights of the toasts whose text has ``saying``."""
    return [toast.size.height for toast in app.screen.query(Toast) if saying in str(toast.render())]


async def _type_launch(app: StemmaApp, pilot: Pilot[None], line: str) -> None:
    await pilot.press("n")
    await until(pilot, lambda: isinstance(app.screen, LaunchScreen), "the launch prompt")
    app.screen.query_one("#script", Input).value = line
    await pilot.pause()


@pytest.mark.parametrize(
    ("typed", "shown", "runnable"),
    [
        (
            "examples/watch_and_cancel.py 2",
            "runs: stemma run --detach --root '/data/my root' examples/watch_and_cancel.py 2",
            True,
        ),
        (
            "flows/nightly.py --day '2026 11 30'",
            "runs: stemma run --detach --root '/data/my root' flows/nightly.py --day '2026 11 30'",
            True,
        ),
        ("a.module:main", "runs: stemma run --detach --root '/data/my root' a.module:main", True),
        ("flows/nightly.py 'open", 'cannot split "flows/nightly.py \'open": No closing', False),
        ("   ", "runs: stemma run --detach --root '/data/my root' SCRIPT [ARGS…]", False),
    ],
)
def test_launch_preview_splits_like_a_shell_and_names_the_root(
    typed: str, shown: str, runnable: bool
) -> None:
    preview, can_run = command_preview(typed, Path("/data/my root"))
    assert preview.startswith(shown)
    assert can_run is runnable


def test_launch_prompt_shows_the_command_as_typed_and_refuses_an_open_quote(
    tmp_path: Path,
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, LaunchScreen), "the launch prompt")
        await pilot.press(*"flows/nightly.py 2")
        await until(
            pilot,
            lambda: (
                str(app.screen.query_one("#command", Static).render())
                == f"runs: stemma run --detach --root {tmp_path / 'store'} flows/nightly.py 2"
            ),
            "the command",
        )
        await pilot.press(*" 'x")
        await until(pilot, lambda: "No closing quotation" in screen_text(app), "the quote error")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, LaunchScreen)  # nothing started: the line waits for a fix
        assert not (tmp_path / "store" / "logs").exists()

    drive(tmp_path / "store", scenario, (80, 24))


def test_launch_passes_the_arguments_and_the_command_shown_runs_on_the_same_root(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    script = tmp_path / "with_args.py"
    script.write_text(ARGS_SCRIPT)
    shown: list[str] = []

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await _type_launch(app, pilot, f"{script} 3")
        shown.append(str(app.screen.query_one("#command", Static).render()))
        await pilot.press("enter")
        await until(pilot, lambda: "starting with_args.py 3…" in _toasts(app), "the first toast")
        await pilot.pause()
        assert _toast_heights(app, "starting") == [1]  # one line: the long path is left out
        # A new interpreter imports stemma and starts a pool first: slow on a busy machine.
        await until(pilot, lambda: len(list_states(root)) == 1, "the started run", 90)
        [state] = list_states(root)
        await until(pilot, lambda: f"started {state.run_id[-8:]}" in _toasts(app), "the toast")
        await pilot.pause()
        assert _toast_heights(app, "started") == [1]  # one line, over the footer
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await until(pilot, lambda: runs.highlighted_run() == state.run_id, "the run selected")

    drive(root, scenario, (80, 24))
    [state] = list_states(root)
    assert state.command[1:] == ("3",)
    assert state.command[0].endswith("with_args.py")
    # Pasted into a shell elsewhere, the command shown runs on the dashboard's root too.
    command = shlex.split(shown[0].removeprefix("runs: "))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    stemma = Path(sys.executable).with_name("stemma")
    subprocess.run([stemma, *command[1:]], cwd=elsewhere, check=True, timeout=120)
    assert len(list_states(root)) == 2
    assert not (elsewhere / ".stemma").exists()


def test_a_failed_launch_is_said_in_the_next_launch_dialog_not_in_a_toast_over_it(
    tmp_path: Path,
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await _type_launch(app, pilot, "no/such/flow.py 2")
        await pilot.press("enter")
        await until(pilot, lambda: "could not start" in _toasts(app), "the launch's error")
        await _type_launch(app, pilot, "")
        await pilot.pause()
        assert _toasts(app) == ""  # the dialog opened over no toast
        app.post_message(LaunchFailed("other.py", "no script 'other.py'"))
        last = app.screen.query_one("#last-launch", Static)
        await until(pilot, lambda: "no script 'other.py'" in str(last.render()), "the error")
        assert _toasts(app) == ""

    drive(tmp_path / "store", scenario, (80, 24))


def test_launch_of_a_script_that_fails_at_once_shows_its_error_and_log(tmp_path: Path) -> None:
    root = tmp_path / "store"
    script = tmp_path / "broken.py"
    script.write_text(FAILING_SCRIPT)

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await _type_launch(app, pilot, f"{script} 2")
        await pilot.press("enter")
        await until(pilot, lambda: "no such day" in _toasts(app), "the launch's error", 90)
        said = _toasts(app)
        assert "the script ended before starting a run: ValueError: no such day: 2026-13-01" in (
            said
        )
        [log] = (root / "logs" / "detached").iterdir()
        assert f"log: {log}" in said

    drive(root, scenario)


def test_launch_of_a_missing_script_says_so_at_once_and_starts_nothing(tmp_path: Path) -> None:
    root = tmp_path / "store"

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await _type_launch(app, pilot, "no/such/flow.py 2")
        await pilot.press("enter")
        await until(pilot, lambda: "could not start" in _toasts(app), "the launch's error")
        assert "no script 'no/such/flow.py'" in _toasts(app)

    drive(root, scenario)
    assert not (root / "logs").exists()
