"""The crash-point hook: listing points, killing the run at one, refusing a malformed address.

Each case runs a small script in its own session (a kill takes the script's process group).
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import pytest

from stemma.core.crash_points import AT_ENV, LOG_ENV, SCOPE_ENV

SCRIPT = """
from stemma.core.crash_points import crash_point
for name in ("staging.tables", "staging.sentinel", "staging.tables", "wave.sealed"):
    crash_point(name)
print("finished")
"""


PARENT = f"""
import subprocess, sys
child = subprocess.run([sys.executable, "-c", {SCRIPT!r}], check=False)
print("parent alive, child", child.returncode)
"""
"""A parent whose child reaches the points, both in one process group."""


def _run(env: dict[str, str], script: str = SCRIPT) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in (AT_ENV, LOG_ENV, SCOPE_ENV)}
    return subprocess.run(
        [sys.executable, "-c", script],
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        start_new_session=True,
    )


def _names(log: pathlib.Path) -> list[str]:
    return [line.split(" ", 2)[2] for line in log.read_text().splitlines()]


def test_crash_points_unarmed_let_the_run_finish() -> None:
    done = _run({})
    assert (done.returncode, done.stdout.strip()) == (0, "finished"), done.stderr


def test_crash_points_with_a_log_list_every_point_in_order(tmp_path: pathlib.Path) -> None:
    log = tmp_path / "points.log"
    done = _run({LOG_ENV: str(log)})
    assert done.returncode == 0, done.stderr
    lines = [line.split(" ", 2) for line in log.read_text().splitlines()]
    assert [seq for seq, _, _ in lines] == ["1", "2", "3", "4"]
    assert [name for _, _, name in lines] == [
        "staging.tables",
        "staging.sentinel",
        "staging.tables",
        "wave.sealed",
    ]


@pytest.mark.parametrize(
    ("at", "reached"),
    [("3", 3), ("staging.tables:2", 3), ("staging.sentinel:1", 2), ("1", 1)],
)
def test_crash_points_armed_kill_the_run_at_that_point(
    tmp_path: pathlib.Path, at: str, reached: int
) -> None:
    log = tmp_path / "points.log"
    done = _run({LOG_ENV: str(log), AT_ENV: at})
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "finished" not in done.stdout
    assert len(_names(log)) == reached


def test_crash_points_armed_at_a_point_never_reached_let_the_run_finish(
    tmp_path: pathlib.Path,
) -> None:
    done = _run({LOG_ENV: str(tmp_path / "points.log"), AT_ENV: "staging.tables:3"})
    assert (done.returncode, done.stdout.strip()) == (0, "finished"), done.stderr


@pytest.mark.parametrize(
    ("scope", "parent_survives"), [("group", False), ("", False), ("process", True)]
)
def test_crash_points_kill_the_process_group_unless_scoped_to_the_process(
    tmp_path: pathlib.Path, scope: str, parent_survives: bool
) -> None:
    env = {LOG_ENV: str(tmp_path / "points.log"), AT_ENV: "wave.sealed:1", SCOPE_ENV: scope}
    done = _run(env, PARENT)
    if parent_survives:
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"parent alive, child {-signal.SIGKILL}"
    else:
        assert done.returncode == -signal.SIGKILL, done.stderr
        assert done.stdout == ""


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({AT_ENV: "staging.tables:0", LOG_ENV: "x"}, "must be N or NAME:K"),
        ({AT_ENV: "twelve", LOG_ENV: "x"}, "must be N or NAME:K"),
        ({AT_ENV: "12"}, f"set {LOG_ENV} to a file path"),
        ({SCOPE_ENV: "run"}, "must be group or process"),
    ],
)
def test_crash_points_refuse_a_malformed_address_before_the_run_starts(
    env: dict[str, str], message: str
) -> None:
    done = _run(env)
    assert done.returncode == 1
    assert message in done.stderr
