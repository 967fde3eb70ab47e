"""``stemma resume RUN``: start a run's recorded command again, detached, on the same root.

For a run whose orchestrator died (an SSH session that dropped, a login node that rebooted): its
script runs again with the same arguments, in the same directory, on the same root and backend,
in its own session (as ``stemma run --detach``). What the dead run finished is answered from the
cache; its new run records that it resumes the old one. Prints the new run's id on stdout, and
on stderr where to watch it.
"""

from __future__ import annotations

import argparse
import sys

from stemma.core.cli.commands import Command
from stemma.core.exit_codes import ExitCode
from stemma.core.runs.launching import Detached
from stemma.core.runs.relaunch import Relaunch
from stemma.core.runs.resuming import resume_run
from stemma.core.runs.roots import existing_root
from stemma.core.runs.run_lookup import resolve_run_id


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="a run id, the start of one, or a pipeline's name")


def _resume(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    run_id = resolve_run_id(root, args.run)
    relaunch, started = resume_run(root, run_id)
    return _report(run_id, relaunch, started)


def _report(run_id: str, relaunch: Relaunch, started: Detached) -> int:
    where = f"pid {started.pid}, output in {started.log}"
    if not started.run_ids:
        print(f"resuming {run_id}: {started.no_run()} ({where})", file=sys.stderr)
        print(f"  it ran: {relaunch.shown()}", file=sys.stderr)
        return ExitCode.RUN_FAILED if started.ended else ExitCode.OK
    new = started.run_ids[0]
    print(new)
    print(
        f"resuming {run_id} as {new} ({where}); watch it with `stemma watch {new}`, "
        f"or follow its output with `tail -f {started.log}`",
        file=sys.stderr,
    )
    return ExitCode.OK


RESUME = Command(
    name="resume",
    help="start a dead run's recorded command again, detached (its finished work is cached)",
    configure=_configure,
    run=_resume,
)
