"""``stemma tui`` as a script or an SSH session without ``-t`` runs it: real subprocesses.

Without a terminal it refuses at once; ``--once`` prints the screen as text; a run or step that
does not exist is an error before the app starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stemma.core.cli import ExitCode

from .conftest import FilledStore, live_state

STEMMA = Path(sys.executable).parent / "stemma"
ESCAPE = "\x1b"


def _stemma(*args: str, columns: int = 120, lines: int = 30) -> subprocess.CompletedProcess[str]:
    """``stemma ARGS`` with no terminal: stdin /dev/null, stdout and stderr pipes."""
    env = {**os.environ, "COLUMNS": str(columns), "LINES": str(lines), "TERM": "xterm-256color"}
    return subprocess.run(
        [str(STEMMA), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_stemma_tui_without_a_terminal_refuses_at_once_naming_what_works(
    filled: FilledStore,
) -> None:
    started = time.monotonic()
    done = _stemma("tui", str(filled.root))
    elapsed = time.monotonic() - started
    assert elapsed < 5, f"took {elapsed:.1f} s to refuse"
    assert done.returncode == ExitCode.USAGE
    assert ESCAPE not in done.stderr
    assert ESCAPE not in done.stdout
    for hint in ("ssh -t", "stemma status", "stemma watch", "stemma tui --once"):
        assert hint in done.stderr, f"{hint!r} not in {done.stderr!r}"


def test_stemma_tui_once_prints_the_runs_list_as_plain_text(filled: FilledStore) -> None:
    done = _stemma("tui", "--once", "--root", str(filled.root), columns=100, lines=20)
    assert done.returncode == ExitCode.OK, done.stderr
    assert ESCAPE not in done.stdout
    lines = done.stdout.splitlines()
    assert len(lines) == 20
    assert max(len(line) for line in lines) <= 100
    [row] = [line for line in lines if "failed" in line]  # the one run, by its status
    assert filled.run_id[-8:] in row or " first " in row  # its short id, or its name
    assert "loading" not in done.stdout
    assert "reading the rest" not in done.stdout


def test_stemma_tui_once_of_a_run_prints_its_steps(filled: FilledStore) -> None:
    done = _stemma("tui", "--once", "--size", "120x30", str(filled.root), filled.run_id[:12])
    assert done.returncode == ExitCode.OK, done.stderr
    assert len(done.stdout.splitlines()) == 30
    for step in ("example.generate", "example.transform", "example.metrics", "example.fail"):
        assert step in done.stdout
    assert f"stemma tui --root {filled.root} {filled.run_id}" in done.stdout  # its header


def test_stemma_tui_once_of_a_step_named_by_its_last_part_prints_its_executions(
    filled: FilledStore,
) -> None:
    done = _stemma("tui", "--once", "--root", str(filled.root), filled.run_id, "--step", "fail")
    assert done.returncode == ExitCode.OK, done.stderr
    assert ESCAPE not in done.stdout
    assert "example.fail" in done.stdout
    rows = [line.split()[0] for line in done.stdout.splitlines()[5:-1] if line.strip()]
    assert sorted(rows) == ["failed", "ok", "ok"], done.stdout
    assert f"{filled.run_id} --step 3" in done.stdout  # the command that reopens it


@pytest.mark.parametrize(
    ("run", "step", "code", "said"),
    [
        ("nosuch", None, ExitCode.NOT_FOUND, "no run 'nosuch'"),
        (None, "nosuch", ExitCode.NOT_FOUND, "its steps: 0 example.generate, 1 example.transform"),
        (None, "9", ExitCode.NOT_FOUND, "has no step 9"),
    ],
    ids=["unknown run", "unknown step name", "unknown step number"],
)
def test_stemma_tui_refuses_an_unknown_run_or_step_before_starting(
    filled: FilledStore, run: str | None, step: str | None, code: ExitCode, said: str
) -> None:
    args = ["tui", "--once", "--root", str(filled.root), run or filled.run_id]
    done = _stemma(*args, *(["--step", step] if step else []))
    assert done.returncode == code
    assert said in done.stderr
    assert done.stdout == ""  # no dashboard was drawn


def test_stemma_tui_refuses_a_prefix_of_several_runs_listing_them(tmp_path: Path) -> None:
    root = tmp_path / "store"
    live_state(root, "nightly_20261129_120000_0000abcd")
    live_state(root, "nightly_20261129_130000_0000beef")
    done = _stemma("tui", "--once", "--root", str(root), "nightly_2026")
    assert done.returncode == ExitCode.USAGE
    assert "names 2 runs" in done.stderr
    assert "0000beef" in done.stderr
    assert done.stdout == ""


def test_stemma_tui_once_opens_a_run_by_the_short_id_the_runs_list_shows(tmp_path: Path) -> None:
    root = tmp_path / "store"
    live_state(root, "nightly_20261129_120000_0000abcd")
    live_state(root, "nightly_20261129_130000_0000beef")
    done = _stemma("tui", "--once", "--root", str(root), "0000abcd")
    assert done.returncode == ExitCode.OK, done.stderr
    assert "nightly_20261129_120000_0000abcd" in done.stdout.splitlines()[0]
