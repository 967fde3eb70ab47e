"""``stemma run SCRIPT [--detach]`` and ``stemma demo``."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import socket
import sys
import traceback
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from stemma.core.cli.commands import Command, installed_commands
from stemma.core.cli.missing_packages import install_hint
from stemma.core.cli.output import is_terminal, rich_available
from stemma.core.errors import StepFailedError
from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunStatus, list_states
from stemma.core.runs.launching import BACKEND_ENV, Detached, detach, run_script
from stemma.core.runs.run_lookup import root_argument
from stemma.core.runs.run_progress import AttachedProgress
from stemma.core.runs.run_rows import run_outcome
from stemma.core.runs.watching import follow_lines
from stemma.core.store.locations import ROOT_ENV

DEMO_SCRIPT = "stemma.core.cli.demo_pipeline"


def _configure_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "script", help="a Python file, a module (as python -m runs it), or module:function"
    )
    parser.add_argument("args", nargs=argparse.REMAINDER, help="passed to the script")
    parser.add_argument(
        "--detach",
        action="store_true",
        help="run in its own session (survives logout); print the run id and return",
    )
    parser.add_argument(
        "--backend", help=f"sets ${BACKEND_ENV} for the script (local, slurm, slurm-intra)"
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--quiet", action="store_true", help="no progress on stderr (the script's output stays)"
    )
    shown.add_argument(
        "--plain",
        action="store_true",
        help="progress as plain lines even on a terminal (as in a batch log)",
    )


def _run(args: argparse.Namespace) -> int:
    root = root_argument(args.root)
    if args.detach:
        started = detach(root, args.script, args.args, args.backend)
        _report(started)
        return ExitCode.RUN_FAILED if started.ended and not started.run_ids else ExitCode.OK
    if args.root is not None:
        os.environ[ROOT_ENV] = str(root)
    if args.backend:
        os.environ[BACKEND_ENV] = args.backend
    since = dt.datetime.now(dt.UTC).isoformat()
    try:
        with _progress(args):
            code = run_script(args.script, args.args)
    except StepFailedError:  # the script let run()'s error through: its run says how it ended
        traceback.print_exc()
        return _runs_code(root, since) or ExitCode.RUN_FAILED
    return code or _runs_code(root, since)


def _progress(args: argparse.Namespace) -> AbstractContextManager[object]:
    """Progress on stderr: bars on a terminal, lines in a log, nothing with ``--quiet``."""
    if args.quiet:
        return nullcontext()
    bars = not args.plain and is_terminal(sys.stderr) and rich_available()
    return AttachedProgress(
        sys.stderr,
        bars=bars,
        redirect_stdout=bars and is_terminal(sys.stdout),
        redirect_stderr=bars,  # the bars are on stderr: what else is written there goes above
    )


def _runs_code(root: Path, since: str) -> ExitCode:
    """The exit code of the runs the script started here (documented in exit_codes).

    A script that finishes without raising still ran its pipelines to some end: one cancelled
    is ``RUN_CANCELLED``, one failed (or completed with failed units) ``RUN_FAILED``, as
    ``stemma watch`` says of a run.
    """
    host, pid = socket.gethostname(), os.getpid()
    mine = [
        state
        for state in list_states(root)
        if state.pid == pid and state.host == host and state.started_at >= since
    ]
    statuses = {str(run_outcome(state)) for state in mine}
    for status in (RunStatus.CANCELLED, RunStatus.FAILED, RunStatus.STALE):
        if status in statuses:
            return ExitCode.for_run_status(status)
    return ExitCode.OK


def _report(started: Detached) -> None:
    for run_id in started.run_ids:
        print(run_id)
    where = f"pid {started.pid}, output in {started.log}"
    if started.run_ids:
        print(
            f"detached ({where}); follow it with `stemma watch {started.run_ids[0]}`",
            file=sys.stderr,
        )
    elif started.ended:
        reason = started.last_words()  # not only in the log: say why, here
        print(f"the script ended before starting a run: {reason} ({where})", file=sys.stderr)
    else:
        print(f"detached, but no run started yet ({where})", file=sys.stderr)


def _configure_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-tui", action="store_true", help="plain progress lines instead of the dashboard"
    )


def _demo(args: argparse.Namespace) -> int:
    root = root_argument(args.root)
    started = detach(root, DEMO_SCRIPT, [], None)
    _report(started)
    if not started.run_ids:
        return ExitCode.RUN_FAILED
    dashboard = {command.name: command for command in installed_commands()[0]}.get("tui")
    if dashboard is not None and not args.no_tui and is_terminal(sys.stdout):
        code = dashboard.run(argparse.Namespace(root=str(root), path=None))
        print(f"the demo keeps running in the background: stemma watch {started.run_ids[0]}")
        return code
    if dashboard is None and not args.no_tui and is_terminal(sys.stdout):
        print(f"(no dashboard: it needs stemma-tui, {install_hint('stemma-tui')})", file=sys.stderr)
    return follow_lines(root, started.run_ids[0], sys.stdout)


RUN = Command(
    name="run",
    help="run a pipeline script here, or --detach it so it outlives the terminal",
    configure=_configure_run,
    run=_run,
)
DEMO = Command(
    name="demo",
    help="run the demo pipeline with the dashboard attached (--no-tui: plain lines)",
    configure=_configure_demo,
    run=_demo,
)
