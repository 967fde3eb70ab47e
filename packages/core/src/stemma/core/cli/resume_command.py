"""``stemma resume RUN``: start a run's recorded command again, detached, on the same root.

For a run whose orchestrator died (an SSH session that dropped, a login node that rebooted): its
script runs again with the same arguments, in the same directory, on the same root and backend,
in its own session (as ``stemma run --detach``). What the dead run finished is answered from the
cache; its new run records that it resumes the old one. Prints the new run's id on stdout, and
on stderr where to watch it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from stemma.core.cli.commands import Command
from stemma.core.cli.exit_codes import CliError, ExitCode
from stemma.core.live import RunStatus, list_states, read_state
from stemma.core.live.state import STATE_FILE, run_dir
from stemma.core.runs.launching import Detached, launch_detached
from stemma.core.runs.relaunch import Relaunch, relaunch_of
from stemma.core.runs.roots import existing_root
from stemma.core.runs.run_lookup import history_events, resolve_run_id
from stemma.core.runs.run_rows import provenance_of
from stemma.core.shared_paths import writable_by_others


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="a run id, the start of one, or a pipeline's name")


def _resume(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    run_id = resolve_run_id(root, args.run)
    relaunch, started = resume_run(root, run_id)
    return _report(run_id, relaunch, started)


def resume_run(root: Path, run_id: str) -> tuple[Relaunch, Detached]:
    """Start ``run_id``'s recorded command again, detached; wait for the run that resumes it.

    The dashboard's ``r`` calls this too (in a thread: it waits up to a minute for the run).

    Raises:
        CliError: the run cannot be resumed (see :func:`~.relaunch.relaunch_of`), it is known
            only from history, or the launcher failed; the message says what to do instead.
    """
    try:
        state = read_state(root, run_id)
    except FileNotFoundError:
        raise CliError(_history_only(root, run_id), ExitCode.NOT_FOUND) from None
    relaunch = relaunch_of(state, root)
    _refuse_a_foreign_record(root, run_id, relaunch)
    _refuse_a_second_resume(root, run_id)
    started = launch_detached(
        root,
        relaunch.command,
        cwd=relaunch.cwd,
        env=relaunch.env,
        what=f"run {run_id}'s command",
        wanted=lambda new: new.resumes == run_id,
    )
    return relaunch, started


def _refuse_a_foreign_record(root: Path, run_id: str, relaunch: Relaunch) -> None:
    """The command is read from the run's state file: one another user could write is not run.

    Whoever can write ``runs/{RUN}/state.json`` chooses what a resume runs; the user is shown
    the command to check and start by hand instead.
    """
    place = writable_by_others(run_dir(root, run_id) / STATE_FILE)
    if place is not None:
        raise CliError(
            f"run {run_id}'s recorded command is not run: {place} can be written by another "
            f"user, who could have chosen it. Check it, then start it by hand: "
            f"{relaunch.shown()}  (or make the root yours alone: `chmod go-w {place}`)",
            ExitCode.USAGE,
        )


def _refuse_a_second_resume(root: Path, run_id: str) -> None:
    """A run already being resumed is not resumed twice (a second ``r``, a second shell)."""
    for other in list_states(root):
        if other.resumes == run_id and other.status is RunStatus.RUNNING:
            raise CliError(
                f"run {run_id} is already being resumed by {other.run_id} (pid {other.pid} on "
                f"{other.host}); follow it with `stemma watch {other.run_id}`",
                ExitCode.USAGE,
            )


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


def _history_only(root: Path, run_id: str) -> str:
    """Why a run known only from history cannot be resumed, and its command line if recorded."""
    line = provenance_of(history_events(root, run_id)).get("command_line")
    said = f"run {run_id} has no live state (only its history), so no recorded command to resume"
    if isinstance(line, list | tuple) and line:
        words = shlex.join(str(word) for word in cast("Sequence[object]", line))
        return f"{said}; it ran `{words}`: start that again by hand with `stemma run --detach`"
    return f"{said}; start its script again by hand with `stemma run --detach SCRIPT ARGS`"


RESUME = Command(
    name="resume",
    help="start a dead run's recorded command again, detached (its finished work is cached)",
    configure=_configure,
    run=_resume,
)
