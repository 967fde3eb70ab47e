"""``stemma tui ROOT`` as a user starts it: the installed command in a pseudo-terminal, timed
until a run's row is on the screen.

The headless sessions import the app directly; this also counts the interpreter's start, the
``stemma`` command's own imports and entry point lookup, Textual's terminal driver and the
bytes of the first frame reaching the terminal. The output is read as it comes (select on the
pty's master side), its escape sequences stripped, and the clock stops when the text of a row
appears: a cell of the runs table, which only a drawn row contains. Then ``q`` quits.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

STEMMA = Path(sys.executable).parent / "stemma"
"""The console script the ``stemma`` distribution installed beside this interpreter."""
ESCAPES = re.compile(
    rb"\x1b(\[[0-9;?<>=$ ]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>])"
)
"""CSI, OSC, charset and keypad sequences: what a terminal draws is what is left."""


@dataclass(frozen=True, kw_only=True)
class TerminalPaint:
    """One start of ``stemma tui`` in a terminal."""

    first_output_s: float
    """From just before the process started to its first byte on the terminal."""
    first_row_s: float
    """From just before the process started to a run's row on the terminal."""
    cpu_at_row_s: float
    """CPU seconds the process had used by then (user + system, every thread)."""
    idle_cpu_percent: float | None
    """Its CPU over ``idle`` seconds once it had settled, in percent of a core (None: not
    asked for)."""
    exit_code: int
    """What the command returned after ``q`` (0 when the dashboard quit cleanly)."""


def time_first_row(
    root: Path,
    marker: str,
    *,
    size: tuple[int, int] = (160, 48),
    env: dict[str, str] | None = None,
    timeout: float = 60.0,
    idle: float = 0.0,
) -> TerminalPaint:
    """Start ``stemma tui root`` in a ``size`` (columns, lines) pty until ``marker`` is drawn.

    Args:
        root: the stemma root to show.
        marker: text that only a drawn run row contains (a host name, say).
        size: the terminal's columns and lines.
        env: the process's environment (default: this one's).
        timeout: give up (and kill the process) after this many seconds.
        idle: then, once the dashboard has settled (the history read after the first frame
            done), measure its CPU over this many seconds, left alone on the runs list.
    """
    process, master, started = _start(root, size, env)
    idle_cpu: float | None = None
    try:
        first_output, first_row = _read_until(master, marker.encode(), started, timeout)
        cpu = _cpu_seconds(process.pid)
        if idle > 0:
            idle_cpu = _idle_cpu_percent(process.pid, master, idle, timeout)
        os.write(master, b"q")
        exit_code = _wait(process, master, timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    return TerminalPaint(
        first_output_s=first_output - started,
        first_row_s=first_row - started,
        cpu_at_row_s=cpu,
        idle_cpu_percent=idle_cpu,
        exit_code=exit_code,
    )


def time_keystrokes(
    root: Path,
    marker: str,
    keys: list[tuple[bytes, str]],
    *,
    size: tuple[int, int] = (160, 48),
    env: dict[str, str] | None = None,
    timeout: float = 60.0,
    settle: float = 1.5,
) -> list[float]:
    """Start ``stemma tui root``; once settled, send each key and time until its text shows.

    Args:
        root: the stemma root to show.
        marker: text of a drawn run row: the dashboard is up.
        keys: ``(bytes sent, text that then reaches the terminal)``, in order; each is sent
            ``settle`` seconds after the last one's text showed.
        size: the terminal's columns and lines.
        env: the process's environment (default: this one's).
        timeout: give up (and kill the process) after this many seconds per step.
        settle: seconds between one key's text showing and the next key.

    Returns:
        Per key, the seconds from just before it was written to its text on the terminal.
    """
    process, master, started = _start(root, size, env)
    times: list[float] = []
    try:
        _read_until(master, marker.encode(), started, timeout)
        _drain(master, 3 * settle)  # the whole list read after the first frame
        for sent, shows in keys:
            _drain(master, settle)  # not "until quiet": the filter box's cursor blinks
            at = time.perf_counter()
            os.write(master, sent)
            _, shown_at = _read_until(master, shows.encode(), at, timeout)
            times.append(shown_at - at)
        os.write(master, b"\x1b")  # escape closes the filter box (alone: "\x1bq" is alt+q)
        _drain(master, 0.3)
        os.write(master, b"q")
        _wait(process, master, timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    return times


def _start(
    root: Path, size: tuple[int, int], env: dict[str, str] | None
) -> tuple[subprocess.Popen[bytes], int, float]:
    """``stemma tui root`` in a new ``size`` pty: the process, the pty's master side, the clock
    just before it started."""
    if not STEMMA.exists():
        raise SystemExit(
            f"{STEMMA} is missing: the stemma command is not installed in this environment; "
            "sync it with every package (uv sync --all-packages, with UV_PROJECT_ENVIRONMENT "
            "pointing at it)"
        )
    master, slave = os.openpty()
    columns, lines = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    environment = dict(env if env is not None else os.environ)
    environment |= {"TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(lines)}
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(STEMMA), "tui", str(root)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=environment,
        start_new_session=True,  # the pty becomes its controlling terminal, as in a shell
    )
    os.close(slave)
    return process, master, started


def _read_until(master: int, marker: bytes, started: float, timeout: float) -> tuple[float, float]:
    """Read the terminal until ``marker`` shows; the clock at the first byte and at the marker."""
    shown = b""
    first_output: float | None = None
    while time.perf_counter() - started < timeout:
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # the process ended: its side of the pty is gone
            break
        now = time.perf_counter()
        first_output = first_output or now
        shown += chunk
        if marker in ESCAPES.sub(b"", shown):
            return first_output, now
    tail = ESCAPES.sub(b"", shown)[-2000:].decode(errors="replace")
    raise TimeoutError(f"no {marker!r} on the terminal after {timeout:.0f} s; it showed:\n{tail}")


def _idle_cpu_percent(pid: int, master: int, seconds: float, timeout: float) -> float:
    """The process's CPU over ``seconds``, in percent of a core, once it has settled.

    Settled: a whole second in which it used under 5% of a core (the history read that
    follows the first frame is over). The terminal is read all along, as a terminal would.
    """
    deadline = time.perf_counter() + timeout
    while True:
        cpu, wall = _cpu_seconds(pid), time.perf_counter()
        _drain(master, 1.0)
        used = (_cpu_seconds(pid) - cpu) / (time.perf_counter() - wall)
        if used < 0.05 or time.perf_counter() > deadline:
            break
    cpu, wall = _cpu_seconds(pid), time.perf_counter()
    _drain(master, seconds)
    return 100 * (_cpu_seconds(pid) - cpu) / (time.perf_counter() - wall)


def _drain(master: int, seconds: float) -> bytes:
    """Read what reaches the terminal for ``seconds``; returns it."""
    shown = b""
    end = time.perf_counter() + seconds
    while (left := end - time.perf_counter()) > 0:
        ready, _, _ = select.select([master], [], [], left)
        if ready:
            try:
                shown += os.read(master, 1 << 16)
            except OSError:
                break
    return shown


def _wait(process: subprocess.Popen[bytes], master: int, timeout: float) -> int:
    """Keep reading (a full pty would block the app's last writes) until the process ends."""
    deadline = time.perf_counter() + timeout
    while process.poll() is None and time.perf_counter() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                os.read(master, 1 << 16)
            except OSError:
                break
    return process.wait(timeout=max(0.1, deadline - time.perf_counter()))


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a living process (``/proc/PID/stat``, every thread)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
