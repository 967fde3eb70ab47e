"""Runs a page's transcripts, in page order with its Python blocks, and compares what they print.

A page marked ``<!-- docs-test: console cwd=… -->`` is run here instead of block by block: each
Python block is saved (and run, unless a transcript runs it: ``$ python go.py`` runs ``go.py``
where the page shows it), and each ```` ```console ```` block's commands run in a shell in the
page's directory, their output compared with what the page shows, both normalized
(:func:`~tests.docs.console_blocks.normalized`). The processes see the page's user and machine
name, and their sleeps are gated (``tests/docs/harness/sitecustomize.py``), so a command shown
running in the background stays there while the page looks at it.
"""

from __future__ import annotations

import datetime as dt
import difflib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from stemma.core.live import RunStatus, list_states, read_state
from stemma.core.live.control import pending_requests
from tests.docs.console_blocks import ConsoleBlock, ConsoleSettings, console_blocks, normalized

HARNESS = Path(__file__).with_name("harness")
COMMAND_TIMEOUT = 240
RECORD_ENV = "STEMMA_DOCS_RECORD"
"""A file to write every transcript that differs to (what each command printed), instead of
failing at the first: for a writer bringing a page up to date."""
TERMINAL = (100, 40)
"""The columns and lines of the terminal a transcript's command runs on."""
WAIT_SECONDS = 120.0
TEARDOWN_ABORT = "terminate called without an active exception"
"""What delta-rs's native runtime prints when it aborts the interpreter's exit, rarely, after a
script that read Delta tables through pyarrow ended well (delta-io/delta-rs#2184,
pola-rs/polars#24169): not the script's failure. The output before it is whole, so the abort is
dropped, never run again (a rerun would find the work cached and print other metadata); a script
that fails in its own code never matches (it prints a traceback)."""
_RUNS_SCRIPT = re.compile(r"\bpython3?\s+(?P<script>[\w./-]+\.py)\b")


class PythonBlock(Protocol):
    """What the runner needs of a Python block (``test_code_blocks.CodeBlock``)."""

    @property
    def line(self) -> int: ...
    @property
    def code(self) -> str: ...
    @property
    def filename(self) -> str: ...
    @property
    def skip_reason(self) -> str | None: ...
    @property
    def snippets(self) -> tuple[str, ...]: ...
    @property
    def where(self) -> str: ...


@dataclass(kw_only=True)
class _Page:
    workdir: Path
    settings: ConsoleSettings
    env: dict[str, str]
    gate: Path
    background: subprocess.Popen[bytes] | None = None
    background_log: Path | None = None
    last_output: str | None = None
    """What the Python block just run printed (a block of output alone below it shows it)."""
    shown: list[str] = field(default_factory=list[str])

    @property
    def paths(self) -> dict[str, str]:
        return {
            str(self.workdir): self.settings.cwd,
            os.path.realpath(self.workdir): self.settings.cwd,
        }


def run_transcripts(
    page: Path,
    workdir: Path,
    settings: ConsoleSettings,
    python: list[PythonBlock],
    environment: Mapping[str, str],
) -> int:
    """Run ``page``'s Python blocks and transcripts in order; return how many items ran.

    Raises:
        AssertionError: a block failed, or a transcript printed other than the page shows.
    """
    gate = workdir / ".docs-gate"  # (hidden: a page may list its directory)
    gate.mkdir(exist_ok=True)  # (a page run after another, in its directory, finds it)
    (gate / "open").touch()
    state = _Page(
        workdir=workdir,
        settings=settings,
        env=_env(environment, workdir, settings, gate),
        gate=gate,
    )
    consoles = [block for block in console_blocks(page) if block.skip_reason is None]
    run_by_transcript = {
        match["script"]
        for block in consoles
        for c in block.commands
        for match in _RUNS_SCRIPT.finditer(c.line)
    }
    items: list[tuple[int, PythonBlock | ConsoleBlock]] = [(b.line, b) for b in python]
    items += [(b.line, b) for b in consoles]
    ran = 0
    try:
        for _, item in sorted(items, key=lambda pair: pair[0]):
            if isinstance(item, ConsoleBlock):
                _console(state, item)
            elif item.skip_reason is None and not item.snippets:
                _python(state, item, run=item.filename not in run_by_transcript)
            else:
                continue
            ran += 1
    finally:
        left = state.background
        if left is not None and left.poll() is None:
            left.kill()
            left.wait()
            raise AssertionError(
                f"{page.name}: a command left in the background never showed its output"
            )
    return ran


def _env(
    base: Mapping[str, str], workdir: Path, settings: ConsoleSettings, gate: Path
) -> dict[str, str]:
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HARNESS), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(
        STEMMA_DOCS_HOST=settings.host,
        STEMMA_DOCS_GATE=str(gate),
        STEMMA_DOCS_CODE=f"{workdir}{os.sep}",
        HOME=str(workdir),  # (a command that writes under ~ stays in the test's directory)
        USER=settings.user,
        LOGNAME=settings.user,
        PYTHONUNBUFFERED="1",  # (in the background, on no terminal) interleaved as on one
        NO_COLOR="1",
        COLUMNS=str(TERMINAL[0]),
        LINES=str(TERMINAL[1]),
    )
    return env


def _python(state: _Page, block: PythonBlock, *, run: bool) -> None:
    script = state.workdir / block.filename
    script.write_text(block.code, encoding="utf-8")
    state.last_output = None
    if run:
        code, output = _shell(state, f"python {block.filename}")
        assert code == 0, f"{block.where} exited {code}\n{output}"
        state.last_output = output


def _console(state: _Page, block: ConsoleBlock) -> None:
    if block.background_output:
        _compare(
            state,
            block.where,
            "(the command in the background)",
            block.output,
            _finish_background(state),
        )
    elif block.held is not None:
        _start_background(state, block)
    elif block.commands:
        for command in block.commands:
            _, output = _shell(state, command.line)
            _compare(state, block.where, command.line, command.output, output)
    else:
        assert state.last_output is not None, (
            f"{block.where}: output alone must follow the Python block that prints it, or say "
            "<!-- docs-test: background output --> or <!-- docs-test: skip REASON -->"
        )
        _compare(state, block.where, "(the Python block above)", block.output, state.last_output)
    state.last_output = None


def _shell(state: _Page, line: str) -> tuple[int, str]:
    """Run ``line`` in a shell on a terminal of its own (``ls`` lays out columns there)."""
    master, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", TERMINAL[1], TERMINAL[0], 0, 0))
    process = subprocess.Popen(
        ["bash", "-c", line],
        cwd=state.workdir,
        env=state.env,
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
    )
    os.close(terminal)
    chunks: list[bytes] = []
    deadline = time.monotonic() + COMMAND_TIMEOUT
    try:
        while time.monotonic() < deadline:
            if not select.select([master], [], [], 0.5)[0]:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    if process.poll() is None and time.monotonic() >= deadline:
        process.kill()
    code = process.wait(timeout=COMMAND_TIMEOUT)
    printed = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
    return without_teardown_abort(code, printed)


def without_teardown_abort(code: int, output: str) -> tuple[int, str]:
    if (
        code == -signal.SIGABRT
        and output.rstrip().endswith(TEARDOWN_ABORT)
        and "Traceback" not in output
    ):
        return 0, output.rstrip().removesuffix(TEARDOWN_ABORT)
    return code, output


def _compare(state: _Page, where: str, command: str, shown: tuple[str, ...], printed: str) -> None:
    expected = normalized("\n".join(shown), paths=state.paths)
    actual = normalized(printed, paths=state.paths)
    if expected == actual:
        return
    diff = "\n".join(difflib.unified_diff(expected, actual, "the page", "printed", lineterm=""))
    record = os.environ.get(RECORD_ENV)
    if record:  # a writer updating a page: every difference, not only the first
        with Path(record).open("a", encoding="utf-8") as out:
            out.write(f"=== {where}: $ {command}\n{printed.rstrip()}\n")
        return
    raise AssertionError(
        f"{where}: `{command}` printed other than the page shows (normalized diff below; "
        f"what it printed, to paste, after it)\n{diff}\n--- printed\n{printed}"
    )


def _start_background(state: _Page, block: ConsoleBlock) -> None:
    [command] = block.commands
    assert state.background is None, f"{block.where}: one command in the background at a time"
    (state.gate / "open").unlink()
    for held in state.gate.glob("held-*"):
        held.unlink()
    log = state.workdir / ".docs-gate" / "background.log"
    with log.open("wb") as out:
        state.background = subprocess.Popen(
            ["bash", "-c", f"exec {command.line}"],
            cwd=state.workdir,
            env=state.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    state.background_log = log
    process = state.background
    _wait(
        lambda: len(list(state.gate.glob("held-*"))) >= (block.held or 0),
        f"{block.where}: {block.held} sleeps of `{command.line}` held",
        ended=lambda: process.poll() is not None,
        log=log,
    )
    # The commands after look at the run's state file, which its orchestrator rewrites once a
    # second: the moment the page shows is the first write after the sleeps were held.
    held_at = dt.datetime.now(dt.UTC)
    root = Path(state.env["STEMMA_ROOT"])
    _wait(
        lambda: all(
            dt.datetime.fromisoformat(run.heartbeat) > held_at
            for run in list_states(root)
            if run.status is RunStatus.RUNNING
        ),
        f"{block.where}: the state file of `{command.line}` written after its sleeps were held",
        ended=lambda: process.poll() is not None,
        log=log,
    )


def _finish_background(state: _Page) -> str:
    """Let the command in the background go on, once its runs took every cancel asked."""
    process, log = state.background, state.background_log
    assert process is not None, "no command is in the background"
    assert log is not None
    root = Path(state.env["STEMMA_ROOT"])
    for run in list_states(root):
        if run.status is RunStatus.RUNNING:
            asked = max((int(r.level) for r in pending_requests(root, run.run_id)), default=0)
            _wait(
                lambda run_id=run.run_id, asked=asked: (
                    read_state(root, run_id).cancel_level >= asked
                ),
                f"run {run.run_id} to take the cancel asked of it",
                ended=lambda: process.poll() is not None,
                log=log,
            )
    (state.gate / "open").touch()
    process.wait(timeout=COMMAND_TIMEOUT)
    state.background = None
    return without_teardown_abort(process.returncode, log.read_text())[1]


def _wait(
    condition: Callable[[], bool], what: str, *, ended: Callable[[], bool], log: Path
) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if ended() or time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n--- output\n{log.read_text()}")
        time.sleep(0.05)
