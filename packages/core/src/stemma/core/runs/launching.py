"""Running a pipeline script in this process, or detached in its own session.

A script is a Python file (run as ``__main__``), a module (run as ``python -m`` would), or
``module:function`` / ``file.py:function`` (called with no arguments). A detached run starts
``stemma run`` again in a new session with no terminal, so it outlives the shell and the SSH
connection; its output goes to ``{root}/logs/detached/``. Worker processes are spawned, so a
script file needs the usual ``if __name__ == "__main__":`` guard, exactly as under ``python``.
"""

from __future__ import annotations

import datetime as dt
import importlib
import os
import runpy
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.live import RunState, list_states
from stemma.core.runs.error_lines import TRACEBACK_HEADER, error_line
from stemma.core.runs.script_target import resolve_script
from stemma.core.store.locations import ROOT_ENV

BACKEND_ENV = "STEMMA_BACKEND"
RUN_ID_WAIT_SECONDS = 60.0
"""How long ``--detach`` waits for the script to start a run before giving up on its id."""


def run_script(script: str, argv: Sequence[str]) -> int:
    """Run ``script`` here with ``sys.argv`` set to ``[script, *argv]``; return its exit code."""
    saved = sys.argv
    sys.argv = [script, *argv]
    try:
        _runner(script)()
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv = saved
    return ExitCode.OK


def _runner(script: str) -> Callable[[], object]:
    found = resolve_script(script)
    if found.path is not None:
        path = found.path
        sys.path.insert(0, str(path.resolve().parent))
        if not found.function:
            return lambda: runpy.run_path(str(path), run_name="__main__")
        namespace = runpy.run_path(str(path), run_name=path.stem)
        return _callable(script, namespace.get(found.function))
    module = found.module or ""
    if not found.function:
        return lambda: runpy.run_module(module, run_name="__main__", alter_sys=True)
    try:
        loaded: object = getattr(importlib.import_module(module), found.function)
    except (ImportError, AttributeError) as err:
        raise CliError(f"cannot load {script!r}: {err}", ExitCode.NOT_FOUND) from None
    return _callable(script, loaded)


def _callable(script: str, loaded: object) -> Callable[[], object]:
    if not callable(loaded):
        raise CliError(f"{script!r} names nothing callable", ExitCode.NOT_FOUND)
    return lambda: loaded()


# Started by `python -c`: it starts the run in a new session and exits at once, so the run is
# nobody's child (no zombie when it ends under a long-lived dashboard) and has no terminal.
_LAUNCHER = """
import subprocess, sys
with open(sys.argv[1], "ab") as log:
    run = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log,
                           stderr=subprocess.STDOUT, start_new_session=True)
print(run.pid)
"""


def split_script_line(text: str) -> tuple[str, tuple[str, ...]]:
    """A script and its arguments typed on one line, split as a shell would.

    Raises:
        CliError: nothing typed, or a quote left open (shlex's reason, and the fix).
    """
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise CliError(
            f"cannot split {text!r}: {err} (close the quote, or escape it with a backslash)",
            ExitCode.USAGE,
        ) from None
    if not words:
        raise CliError("nothing to run: type a script, then its arguments", ExitCode.USAGE)
    return words[0], tuple(words[1:])


def detach_command(
    script: str, argv: Sequence[str], backend: str | None = None, *, root: Path | None = None
) -> str:
    """The ``stemma run --detach`` command line that starts ``script`` (for the user to see).

    With ``root``, the line names it (``--root R``), as :func:`detach` passes it: pasted into a
    shell, the line then runs on that root, not on ``$STEMMA_ROOT`` or ``./.stemma``.
    """
    options = ["--root", str(root)] if root is not None else []
    options += ["--backend", backend] if backend else []
    return shlex.join(["stemma", "run", "--detach", *options, script, *argv])


@dataclass(frozen=True, kw_only=True)
class Detached:
    """A pipeline script started in its own session."""

    pid: int
    log: Path
    run_ids: tuple[str, ...]
    """The runs it started (empty if none started in time)."""
    ended: bool
    """True if it had already exited when the wait for its run ended."""

    def last_words(self) -> str:
        """What its log says went wrong: the exception's line, else the log's last line."""
        tail = _log_tail(self.log)
        if TRACEBACK_HEADER in tail:
            return error_line(tail)
        lines = tail.strip().splitlines()
        return lines[-1].strip() if lines else "it printed nothing"

    def no_run(self) -> str:
        """Why no run id came back, in one line (empty when a run started)."""
        if self.run_ids:
            return ""
        if self.ended:
            return f"the script ended before starting a run: {self.last_words()}"
        return (
            f"no run started within {RUN_ID_WAIT_SECONDS:g} s; the script is still going "
            f"(pid {self.pid}), its log's last line: {self.last_words()}"
        )


def _log_tail(log: Path, size: int = 65536) -> str:
    """The end of a detached script's log, where its traceback is (empty if unreadable)."""
    try:
        with log.open("rb") as handle:
            handle.seek(max(0, handle.seek(0, 2) - size))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def detach(root: Path, script: str, argv: Sequence[str], backend: str | None) -> Detached:
    """Start ``stemma run SCRIPT`` in a new session and wait for the run it starts.

    Raises:
        CliError: no such script file or module (nothing is started), or the launcher itself failed
            (the message has its error output).
    """
    resolve_script(script)  # a missing one is said now, not after a detached process died of it
    extra = {ROOT_ENV: str(root)} | ({BACKEND_ENV: backend} if backend else {})
    command = [sys.executable, "-m", "stemma.core.cli.main", "run", script, *argv]
    return launch_detached(root, command, cwd=Path.cwd(), env=extra, what=repr(script))


def launch_detached(
    root: Path,
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    what: str,
    wanted: Callable[[RunState], bool] = lambda _: True,
) -> Detached:
    """Start ``command`` in ``cwd`` in a new session, its output in ``{root}/logs/detached/``.

    Then wait (up to :data:`RUN_ID_WAIT_SECONDS`) for its process to start a run that is
    ``wanted``, or to end. In its own session with no terminal, its stdin from ``/dev/null``:
    the end of the SSH or tmux session that started it reaches neither it nor its workers.

    Args:
        root: the root its runs write to (where its log goes).
        command: the program and its arguments.
        cwd: where it runs.
        env: variables set on top of this process's environment.
        what: what is started, for the error when the launcher fails (``'flow.py'``).
        wanted: which of the runs it starts to wait for (every run, by default).

    Raises:
        CliError: the launcher itself failed (the message has its error output).
    """
    logs = root / "logs" / "detached"
    logs.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d_%H%M%S")
    log = logs / f"{stamp}_{os.getpid()}.log"
    launched = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, str(log), *command],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
        check=False,
        timeout=60,
    )
    if launched.returncode != 0:
        raise CliError(f"could not start {what}: {launched.stderr.strip()}")
    pid = int(launched.stdout.strip())
    deadline = time.monotonic() + RUN_ID_WAIT_SECONDS
    while time.monotonic() < deadline:
        started = [s for s in list_states(root) if s.pid == pid]
        ended = not _alive(pid)
        if ended or any(wanted(state) for state in started):
            ids = tuple(s.run_id for s in sorted(started, key=lambda s: not wanted(s)))
            return Detached(pid=pid, log=log, run_ids=ids, ended=ended)
        time.sleep(0.2)  # the script is importing and planning: nothing to wait on but its file
    ids = tuple(s.run_id for s in list_states(root) if s.pid == pid)
    return Detached(pid=pid, log=log, run_ids=ids, ended=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
