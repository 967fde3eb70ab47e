"""Resuming a dead run: its recorded command started again, detached, once and only if safe.

``stemma resume RUN`` and the dashboard's ``r`` both call :func:`resume_run`.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.live import RunStatus, list_states, read_state
from stemma.core.live.state import STATE_FILE, run_dir
from stemma.core.runs.launching import Detached, launch_detached
from stemma.core.runs.relaunch import Relaunch, relaunch_of
from stemma.core.runs.run_lookup import history_events
from stemma.core.runs.run_rows import provenance_of
from stemma.core.shared_paths import writable_by_others


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


def _history_only(root: Path, run_id: str) -> str:
    """Why a run known only from history cannot be resumed, and its command line if recorded."""
    line = provenance_of(history_events(root, run_id)).get("command_line")
    said = f"run {run_id} has no live state (only its history), so no recorded command to resume"
    if isinstance(line, list | tuple) and line:
        words = shlex.join(str(word) for word in cast("Sequence[object]", line))
        return f"{said}; it ran `{words}`: start that again by hand with `stemma run --detach`"
    return f"{said}; start its script again by hand with `stemma run --detach SCRIPT ARGS`"
