"""Reap's question before it cancels work a resume could wait for.

A stale run's pending and running elements are hours of cluster work that ``stemma resume``
can wait for instead of running again; reaping cancels them. So reap asks first (y/N, no by
default) on a terminal, and refuses without one unless told ``--yes``: a script that reaps must
say so.
"""

from __future__ import annotations

import sys
from pathlib import Path

from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.runs.alive_jobs import alive_jobs


def confirm_cancel(root: Path, run_id: str) -> bool:
    """True when reaping ``run_id`` may go on: nothing to lose, or the user said yes.

    Raises:
        CliError: (USAGE) there is work to lose and no terminal to ask on: pass ``--yes``.
    """
    jobs = alive_jobs(root, run_id)
    if not jobs.adoptable:
        return True
    noun = "element" if jobs.adoptable == 1 else "elements"
    lost = (
        f"run {run_id} has {jobs.adoptable} {noun} still pending or running in the scheduler "
        f"that `stemma resume {run_id}` could wait for instead of running them again"
    )
    if not _interactive():
        raise CliError(
            f"{lost}; reaping cancels them: pass --yes to reap anyway, or resume it",
            ExitCode.USAGE,
        )
    print(f"{lost} ({jobs.summary()}).", file=sys.stderr)
    try:
        answer = input("cancel them and settle the run? [y/N] ")
    except EOFError:
        answer = ""
    return answer.strip().lower() in ("y", "yes")


def _interactive() -> bool:
    """Whether a person can answer on stdin (a terminal; ``TERM=dumb`` is one too)."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):  # no stdin at all, or closed
        return False
