"""Running a pipeline script in this process, or detached in its own session.

A script is a Python file (run as ``__main__``), a module (run as ``python -m`` would), or
``module:function`` (the function is called with no arguments). A detached run starts
``stemma run`` again in a new session with no terminal, so it outlives the shell and the SSH
connection; its output goes to ``{root}/logs/detached/``.
"""

from __future__ import annotations

import datetime as dt
import importlib
import os
import runpy
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from stemma.core.cli.exit_codes import CliError, ExitCode
from stemma.core.layout import ROOT_ENV
from stemma.core.live import list_states

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
    path = Path(script)
    if path.suffix == ".py" or path.is_file():
        if not path.is_file():
            raise CliError(f"no script {script!r} (from {Path.cwd()})", ExitCode.NOT_FOUND)
        sys.path.insert(0, str(path.resolve().parent))
        return lambda: runpy.run_path(str(path), run_name="__main__")
    module, _, function = script.partition(":")
    if not function:
        return lambda: runpy.run_module(module, run_name="__main__", alter_sys=True)
    try:
        loaded = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as err:
        raise CliError(f"cannot load {script!r}: {err}", ExitCode.NOT_FOUND) from None
    if not callable(loaded):
        raise CliError(f"{script!r} is not callable", ExitCode.USAGE)
    return lambda: loaded()


@dataclass(frozen=True, kw_only=True)
class Detached:
    """A pipeline script started in its own session."""

    pid: int
    log: Path
    run_ids: tuple[str, ...]
    """The runs it started (empty if none started in time)."""
    exit_code: int | None
    """Its exit code if it already ended, else None."""


def detach(root: Path, script: str, argv: Sequence[str], backend: str | None) -> Detached:
    """Start ``stemma run SCRIPT`` in a new session and wait for the run it starts."""
    logs = root / "logs" / "detached"
    logs.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d_%H%M%S")
    log = logs / f"{stamp}_{os.getpid()}.log"
    env = {**os.environ, ROOT_ENV: str(root)}
    if backend:
        env[BACKEND_ENV] = backend
    command = [sys.executable, "-m", "stemma.core.cli.main", "run", script, *argv]
    with log.open("ab") as out:
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # no controlling terminal: SIGHUP at logout never reaches it
            env=env,
            cwd=Path.cwd(),
        )
    deadline = time.monotonic() + RUN_ID_WAIT_SECONDS
    while time.monotonic() < deadline:
        started = tuple(s.run_id for s in list_states(root) if s.pid == child.pid)
        code = child.poll()
        if started or code is not None:
            return Detached(pid=child.pid, log=log, run_ids=started, exit_code=code)
        time.sleep(0.2)  # the child is importing and planning: nothing to wait on but its file
    return Detached(pid=child.pid, log=log, run_ids=(), exit_code=None)
