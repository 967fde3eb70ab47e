"""An attached `stemma run` shows its runs' progress on stderr: lines in a log, bars in a pty."""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from stemma.core.exit_codes import ExitCode

STEMMA = Path(sys.executable).parent / "stemma"
UNITS = 4
SCRIPT = """
import sys
from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("progress", max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": int(sys.argv[1]), "rows": 2})
    print("the script's own line", flush=True)
    copy = {"dataset": generated.output("datasets")}
    pipeline.run(SlowCopy, inputs=copy, params={"seconds": 0.4})
    pipeline.finalize()
"""
# a line of LineFeed that says only counts (no status word before them)
COUNT_ONLY = re.compile(r"step \d+ [\w.]+: \d+/\d+ \(")
STEP = re.compile(r"(step \d+) ")


def _count_lines_too_soon(stderr: str, at_least: float) -> list[str]:
    """Count-only lines that came less than ``at_least`` seconds after their step's last line."""
    last: dict[str, dt.datetime] = {}
    soon: list[str] = []
    for line in stderr.splitlines():
        stamp, text = line.split(" ", 1)
        when = dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")
        step = STEP.match(text)
        if step is None:
            continue
        before = last.get(step.group(1))
        waited = None if before is None else (when - before).total_seconds()
        if COUNT_ONLY.match(text) and (waited is None or waited < at_least):
            soon.append(line)
        last[step.group(1)] = when
    return soon


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "progress_script.py"
    path.write_text(SCRIPT)
    return path


def test_run_without_a_terminal_writes_progress_lines_to_stderr_and_leaves_stdout_alone(
    tmp_path: Path, script: Path
) -> None:
    done = subprocess.run(
        [str(STEMMA), "--root", str(tmp_path / "store"), "run", str(script), str(UNITS)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout == "the script's own line\n"
    lines = [line.split(" ", 1)[1] for line in done.stderr.splitlines()]
    assert "\x1b[" not in done.stderr
    assert lines[0].startswith("run progress_")
    assert "backend local" in lines[0]
    assert (
        f"step 1 example.slow_copy: completed {UNITS}/{UNITS} (succeeded {UNITS}, cached 0, "
        "failed 0, cancelled 0, running 0)"
    ) in lines
    assert lines[-1].endswith(
        f"completed: 2 steps, {UNITS + 1}/{UNITS + 1} units, 0 failed, 0 cancelled"
    )
    # a line that tells only counts comes ten seconds after its step's previous line, or later
    # (a second less for the stamps' rounding): a quick step shows only its statuses, and one
    # that a loaded machine slows down does not fill the log
    assert _count_lines_too_soon(done.stderr, at_least=9) == []


def test_run_quiet_shows_no_progress(tmp_path: Path, script: Path) -> None:
    done = subprocess.run(
        [str(STEMMA), "--root", str(tmp_path / "store"), "run", "--quiet", str(script), "2"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout == "the script's own line\n"
    assert "step " not in done.stderr
    assert "run progress_" not in done.stderr


def _run_in_pty(argv: list[str], cwd: Path, rows: int, columns: int) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal of ``rows`` x ``columns`` as its stdio."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(columns)}
    child = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if child.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
    return child.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize(("rows", "columns"), [(24, 80), (50, 200)])
def test_run_on_a_terminal_draws_a_progress_bar_per_step(
    tmp_path: Path, script: Path, rows: int, columns: int
) -> None:
    code, screen = _run_in_pty(
        [str(STEMMA), "--root", str(tmp_path / "store"), "run", str(script), str(UNITS)],
        tmp_path,
        rows=rows,
        columns=columns,
    )
    assert code == ExitCode.OK, screen
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)
    assert "the script's own line" in plain
    bars = [line for line in plain.splitlines() if "example.slow_copy" in line and "━" in line]
    assert bars, plain
    assert any(f"{UNITS}/{UNITS}" in line and "completed" in line for line in bars), bars
    assert all(len(line.rstrip("\r")) <= columns for line in plain.splitlines())


def test_run_plain_on_a_terminal_writes_lines_not_bars(tmp_path: Path, script: Path) -> None:
    code, screen = _run_in_pty(
        [str(STEMMA), "--root", str(tmp_path / "store"), "run", "--plain", str(script), "2"],
        tmp_path,
        rows=24,
        columns=80,
    )
    assert code == ExitCode.OK, screen
    assert "━" not in screen
    assert "step 1 example.slow_copy: completed 2/2" in screen
