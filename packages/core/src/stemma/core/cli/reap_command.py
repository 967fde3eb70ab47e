"""``stemma reap RUN``: clean up after a run whose orchestrator died.

Scheduler packages register a reaper under the ``stemma.reapers`` entry point group: a callable
``reaper(run_id, *, root) -> list[str]`` that cancels the run's jobs and returns their ids
(stemma-slurm's is ``stemma.slurm.reap:reap``). Then the whole results the run staged are
committed, and the run is settled (``run_settling``): written final, so that it no longer reads
``stale``. Elements still pending or running that ``stemma resume`` could wait for are cancelled
only once the user says so (``confirm_reap``), or with ``--yes``. Local workers need no reaper:
they exit on their own when their orchestrator is gone. Every step of that is printed: what
was stopped, committed and settled.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import cast

from stemma.core import plugins
from stemma.core.cli.commands import Command
from stemma.core.cli.confirm_reap import confirm_cancel
from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.live import RunStatus, read_state
from stemma.core.runs.roots import existing_root
from stemma.core.runs.run_lookup import resolve_run_id
from stemma.core.runs.run_settling import settle_run
from stemma.core.runs.watch_lines import step_counts

REAPER_GROUP = plugins.REAPERS

Reaper = Callable[..., list[str]]


def installed_reapers() -> dict[str, Reaper]:
    """Every reaper registered by an installed package, by name."""
    return cast(dict[str, Reaper], plugins.callables(REAPER_GROUP))


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="a run id, or the start of one")
    parser.add_argument(
        "--force", action="store_true", help="reap even if the run still looks alive"
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="cancel without asking the jobs that `stemma resume` could wait for (for scripts)",
    )


def _reap(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    run_id = resolve_run_id(root, args.run)
    try:
        state = read_state(root, run_id)
    except FileNotFoundError:
        state = None
    if state is not None and state.status is RunStatus.RUNNING and not args.force:
        raise CliError(
            f"run {run_id} is alive (pid {state.pid} on {state.host}); stop it with "
            f"`stemma cancel {run_id} --level 3`, or reap anyway with --force",
            ExitCode.USAGE,
        )
    stale = state is not None and state.status is RunStatus.STALE
    if stale and not args.yes and not confirm_cancel(root, run_id):
        print(f"nothing cancelled; `stemma resume {run_id}` starts it again and waits for them")
        return ExitCode.OK
    if state is not None and state.host:
        alive = state.status is RunStatus.RUNNING  # and --force
        how = "still runs: reaping it anyway (--force)" if alive else "is gone"
        print(f"run {run_id}: its orchestrator (pid {state.pid} on {state.host}) {how}")
    for name, reaper in sorted(installed_reapers().items()):
        jobs = reaper(run_id, root=root)
        print(f"{name}: cancelled {len(jobs)} jobs" + (f" ({', '.join(jobs)})" if jobs else ""))
    if state is None or state.backend.startswith("local"):
        print(LOCAL_WORKERS)
    committed = _commit_staged(root)
    print(
        f"committed {committed} staged results (the whole ones, of {run_id} and of any other "
        "dead run on this root): a rerun answers them from the execution cache"
    )
    settled = settle_run(root, run_id, state)
    if settled is None:
        final = state.status.value if state is not None else "unknown"
        print(f"run {run_id} was already settled ({final}): nothing more to do")
        return ExitCode.OK
    print(
        f"run {run_id} settled as {settled.state.status.value} (counts as its orchestrator "
        "last wrote them; what was running or pending is counted cancelled)"
    )
    if not settled.steps:
        print("  no step was left unfinished")
    for step in settled.steps:
        print(f"  step {step.number} {step.name}: {step.status}, {step_counts(step)}")
    if settled.events:
        print(f"  {settled.events} final step events written to the steps log")
    return ExitCode.OK


LOCAL_WORKERS = "local workers stop by themselves within a second of their orchestrator's death"


def _commit_staged(root: Path) -> int:
    from stemma.core.store.opening import open_store

    if not root.is_dir():
        return 0
    return open_store(root).recover()


REAP = Command(
    name="reap",
    help="settle a dead run: cancel its scheduler jobs, commit what it staged, mark it final",
    configure=_configure,
    run=_reap,
)
