"""``stemma tui RUN --step NAME`` opens that step over its run over the runs list.

With Pilot at 80x24 and 160x48, and in a real terminal (tmux) through the command line; each
screen's header shows the command that reopens it.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from stemma.tui.app import StemmaApp
from stemma.tui.opening import split_target
from stemma.tui.reopen import reopen_command
from stemma.tui.screens import RunScreen, RunsScreen, StepScreen

from .conftest import FilledStore, until
from .test_snapshots import screen_text
from .test_terminal import STEMMA, Terminal

SIZES = [(80, 24), (160, 48)]


def _header(app: StemmaApp) -> str:
    return screen_text(app).splitlines()[0].strip()


TERMINAL_ENV = {"TERM": "xterm-256color", "PATH": os.environ["PATH"]}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_app_opened_on_a_step_goes_back_to_its_run_then_the_runs(
    filled: FilledStore, size: tuple[int, int]
) -> None:
    async def play() -> None:
        app = StemmaApp(filled.root, run_id=filled.run_id, step=1)
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
            screen = app.screen
            assert isinstance(screen, StepScreen)
            assert (screen.run_id, screen.number) == (filled.run_id, 1)
            await until(pilot, lambda: "example.transform" in screen_text(app), "the step")
            assert _header(app).endswith(f"{filled.run_id} --step 1")
            assert len(_header(app)) <= size[0] - 2
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, RunScreen), "its run")
            assert _header(app).endswith(filled.run_id)
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, RunsScreen), "the runs list")
            assert _header(app).endswith(reopen_command(filled.root, width=size[0] - 2))

    asyncio.run(play())


def test_reopen_command_shortens_a_long_root_from_the_left_to_fit_80_columns() -> None:
    root = Path("/home/someone/projects/a-rather-long-project-name/data/.stemma")
    run_id = "nightly_20261129_120000_0000abcd"
    whole = reopen_command(root, run_id, 12)
    assert whole == f"stemma tui --root {root} {run_id} --step 12"
    fitted = reopen_command(root, run_id, 12, width=78)
    assert len(fitted) == 78
    assert fitted.startswith("stemma tui --root …")
    assert fitted.endswith(f"/data/.stemma {run_id} --step 12")
    assert reopen_command(Path("my store"), run_id) == f"stemma tui --root 'my store' {run_id}"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_stemma_tui_in_tmux_opens_the_named_step_and_goes_back_to_the_runs(
    filled: FilledStore, size: tuple[int, int]
) -> None:
    command = f"{STEMMA} tui --root {filled.root} {filled.run_id[:14]} --step transform"
    terminal = Terminal(command, TERMINAL_ENV, size)
    try:
        shown = terminal.wait_for(
            lambda s: "3 executions" in s and "example.transform" in s, "the step screen"
        )
        lines = shown.splitlines()
        assert len(lines) == size[1]
        assert max(len(line) for line in lines) <= size[0]
        assert f"{filled.run_id} --step 1" in lines[0]  # the command that reopens it
        terminal.keys("Escape")
        terminal.wait_for(lambda s: "example.metrics" in s and "--step" not in s, "the run")
        terminal.keys("Escape")
        # The runs list: the header reopens it (no run named), and the run shows by short id.
        shown = terminal.wait_for(
            lambda s: (
                s.splitlines()[0].rstrip().endswith(f"--root {filled.root}")
                and filled.run_id[-8:] in s
            ),
            "the runs",
        )
        assert shown.splitlines()[0].rstrip().endswith(f"stemma tui --root {filled.root}")
        terminal.keys("q")
    finally:
        terminal.close()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("first",), (None, "first")),  # a run: no / and no root by that name here
        (("store",), ("store", None)),  # a directory holding a root: `stemma tui ROOT` as before
        (("./elsewhere",), ("./elsewhere", None)),  # a path: the root (refused later if none)
        (("store", "first"), ("store", "first")),
        ((None,), (None, None)),
    ],
)
def test_split_target_tells_a_root_from_a_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str | None, ...],
    expected: tuple[str | None, str | None],
) -> None:
    (tmp_path / "store" / "runs").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    first, second = (*args, None)[:2]
    assert split_target(first, second) == expected
