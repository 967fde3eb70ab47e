"""``stemma runs``, ``status``, ``watch`` and ``cancel``: the live channel and the history."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from stemma.core.cancel_levels import CancelLevel
from stemma.core.cli.commands import Command
from stemma.core.cli.output import (
    OutputFormat,
    add_format_option,
    is_terminal,
    print_rows,
    rich_available,
)
from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.live import RunStatus, StepState, read_state, request_cancel
from stemma.core.runs.roots import existing_root
from stemma.core.runs.run_lookup import all_runs, history_events, resolve_run_id
from stemma.core.runs.run_rows import RunRow, steps_from_history
from stemma.core.runs.stale_runs import STALE_WORDS, stale_lines
from stemma.core.runs.watching import follow_lines, follow_progress

RUN_COLUMNS = ("run_id", "status", "started", "secs", "steps", "user", "host", "command")
"""As the dashboard's runs list: ``command`` is the script and its arguments, after the
pipeline's name unless the script's name says it (``RunRow.description``)."""
STEP_COLUMNS = (
    "step",
    "name",
    "status",
    "total",
    "done",
    "succeeded",
    "cached",
    "failed",
    "cancelled",
    "running",
)
"""The counts of ``stemma.core.unit_counts``: total = succeeded + failed + cancelled + running
+ pending; cached is part of succeeded; done = succeeded + failed + cancelled."""


def _configure_runs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=None, help="show only the newest N runs")
    parser.add_argument(
        "--status", choices=[s.value for s in RunStatus], help="only runs with this status"
    )
    add_format_option(parser)


def _runs(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    now = dt.datetime.now(dt.UTC)
    rows = [row for row in all_runs(root) if args.status in (None, row.status.value)]
    rows = rows if args.limit is None else rows[: args.limit]
    print_rows([_run_dict(row, now) for row in rows], RUN_COLUMNS, args.format)
    return ExitCode.OK


def _run_dict(row: RunRow, now: dt.datetime) -> dict[str, object]:
    return {
        "run_id": row.run_id,
        "status": row.status.value,
        "started": row.started.strftime("%Y-%m-%d %H:%M"),
        "secs": round(row.duration(now), 1),
        "steps": f"{row.steps_done}/{row.steps_total}",
        "user": row.user,
        "host": row.host,
        "command": row.description,
    }


def _configure_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="a run id, or the start of one")


def _status(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    run_id = resolve_run_id(root, args.run)
    try:
        state = read_state(root, run_id)
        stale = state.status is RunStatus.STALE
        header = (
            f"run {state.run_id}: {STALE_WORDS if stale else state.status} on {state.host} "
            f"(pid {state.pid}), backend {state.backend}, started {state.started_at}"
        )
        if state.resumes:
            header += f", resuming {state.resumes}"
        if state.cancel_level:
            header += f", cancel level {CancelLevel(state.cancel_level).describe()}"
        if state.reaped_at:
            header += f", settled by stemma reap at {state.reaped_at}"
        if stale:
            header += "\n" + stale_lines(root, run_id)
        steps = state.steps
    except FileNotFoundError:
        steps = steps_from_history(history_events(root, run_id))
        header = f"run {run_id}: from history (no live state)"
    # (csv and json are for programs: stdout holds only them, the header goes to stderr)
    print(header, file=sys.stdout if args.format == OutputFormat.TABLE.value else sys.stderr)
    print_rows([_step_dict(step) for step in steps], STEP_COLUMNS, args.format)
    return ExitCode.OK


def _step_dict(step: StepState) -> dict[str, object]:
    return {
        "step": step.number,
        "name": step.name,
        "status": step.status + (" (hit)" if step.cache == "step" else ""),
        "total": step.total,
        "done": step.done,
        "succeeded": step.succeeded,
        "cached": step.cached,
        "failed": step.failed,
        "cancelled": step.cancelled,
        "running": step.running,
    }


def _configure_status(parser: argparse.ArgumentParser) -> None:
    _configure_run(parser)
    add_format_option(parser)


def _configure_watch(parser: argparse.ArgumentParser) -> None:
    _configure_run(parser)
    parser.add_argument(
        "--plain", action="store_true", help="one line per event even on a terminal"
    )


def _watch(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    run_id = resolve_run_id(root, args.run)
    try:
        read_state(root, run_id)
    except FileNotFoundError:
        raise CliError(
            f"run {run_id} has no live state to watch (it ran before the live channel, or its "
            f"state was removed); `stemma status {run_id}` shows its history",
            ExitCode.NOT_FOUND,
        ) from None
    if not args.plain and is_terminal(sys.stdout) and rich_available():
        return follow_progress(root, run_id, sys.stdout)
    return follow_lines(root, run_id, sys.stdout)


def _configure_cancel(parser: argparse.ArgumentParser) -> None:
    _configure_run(parser)
    parser.add_argument(
        "--level",
        default="1",
        help="1 graceful (default), 2 force, 3 hard; or the names: "
        + "; ".join(level.describe() for level in CancelLevel),
    )


def _cancel(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    try:
        level = CancelLevel.parse(args.level)
    except ValueError as err:
        raise CliError(str(err), ExitCode.USAGE) from None
    run_id = resolve_run_id(root, args.run)
    try:
        state = read_state(root, run_id)
    except FileNotFoundError:
        raise CliError(
            f"run {run_id} is not running (no live state); nothing to cancel", ExitCode.NOT_FOUND
        ) from None
    if state.status is not RunStatus.RUNNING:
        hint = (
            f": its orchestrator is gone; `stemma resume {run_id}` starts it again, "
            f"`stemma reap {run_id}` settles it"
        )
        stale = state.status is RunStatus.STALE
        print(
            f"run {run_id} is {state.status}; nothing to cancel" + (hint if stale else ""),
            file=sys.stderr,
        )
        return ExitCode.OK if state.status is not RunStatus.STALE else ExitCode.RUN_STALE
    request_cancel(root, run_id, level)
    print(f"asked run {run_id} to cancel: {level.describe()}")
    if level < CancelLevel.HARD:
        print(f"next: stemma cancel {run_id} --level {int(level) + 1}")
    return ExitCode.OK


RUNS = Command(
    name="runs", help="list the runs of a root, newest first", configure=_configure_runs, run=_runs
)
STATUS = Command(
    name="status", help="a run's steps and their counts", configure=_configure_status, run=_status
)
WATCH = Command(
    name="watch",
    help="follow a run until it ends (one line per event when not on a terminal)",
    description="Follow a run until it ends. Exit code: 0 completed, 1 failed, 5 cancelled, "
    "6 stale.",
    configure=_configure_watch,
    run=_watch,
)
CANCEL = Command(
    name="cancel",
    help="ask a running run to stop (levels 1 graceful, 2 force, 3 hard)",
    configure=_configure_cancel,
    run=_cancel,
)
