"""``stemma reap RUN``: cancel every job of a run whose orchestrator is gone; and what is left.

A run's jobs are found two ways, and both are cancelled: by name (every job name of a run starts
with its tag, ``stemma-{run8}``) among this user's jobs in squeue, and by the ids the run
recorded in ``{root}/runs/{run_id}/slurm_jobs.jsonl`` as it submitted them.

Before that, :func:`alive_elements` says which of the ledger's elements the controller still
holds (``stemma status``, the dashboard, and reap's question before it cancels work that
``stemma resume`` could wait for).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from stemma.core.run_ids import run_tag
from stemma.core.runs.alive_jobs import AliveElement
from stemma.slurm import commands
from stemma.slurm.job_ledger import LEDGER_NAME, read_ledger
from stemma.slurm.job_states import Phase, array_id, parse_sacct

_TAG = re.compile(r"^stemma-[0-9a-f]{8}$")


def tag_of(run: str) -> str:
    """``stemma-{run8}`` for a run id, or the tag itself when given one."""
    return run if _TAG.match(run) else run_tag(run)


def run_jobs(run: str, *, root: str | os.PathLike[str] | None = None) -> list[str]:
    """The job ids of ``run`` still in squeue: named with its tag, or in its ledger under ``root``.

    Jobs that already left squeue are not listed: there is nothing left to cancel.
    """
    tag = tag_of(run)
    queued = commands.squeue_jobs()
    found = {job for job, name in queued if _belongs(name, tag)}
    if root is not None and not _TAG.match(run):
        recorded = {entry.job_id for entry in read_ledger(Path(root) / "runs" / run / LEDGER_NAME)}
        found |= recorded & {job for job, _ in queued}
    return sorted(found, key=lambda job: (len(job), job))


def reap(
    run: str, *, root: str | os.PathLike[str] | None = None, wait_seconds: float = 30.0
) -> list[str]:
    """Cancel every job of ``run`` (a run id or its ``stemma-{run8}`` tag) at once.

    Args:
        run: the run id (``first_20261129_101500_ab12cd34``) or its tag (``stemma-ab12cd34``).
        root: the store root, to also cancel the ids the run recorded in its ledger.
        wait_seconds: how long to wait for the jobs to leave squeue (0: do not wait).

    Returns:
        The ids of the jobs that were still queued or running, now cancelled (an array as
        its base id).

    Raises:
        ClusterUnavailableError: the SLURM commands are missing or do not answer.
    """
    jobs = run_jobs(run, root=root)
    if not jobs:
        return []
    commands.scancel(jobs, signal="KILL")
    commands.scancel(jobs)
    tag = tag_of(run)
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        left = {job for job, name in commands.squeue_jobs() if _belongs(name, tag)}
        if not left & set(jobs):
            break
        time.sleep(0.5)
    return jobs


def _belongs(name: str, tag: str) -> bool:
    return name == tag or name.startswith(f"{tag}-")


def alive_elements(run: str, *, root: str | os.PathLike[str]) -> list[AliveElement]:
    """The elements of ``run``'s ledger that the controller still holds: pending or running.

    One squeue call for all of the run's arrays. A run with no ledger (not a SLURM run, or one
    that submitted nothing) has none, without asking the controller.

    Raises:
        ClusterUnavailableError: the SLURM commands are missing or do not answer.
    """
    entries = list(read_ledger(Path(root) / "runs" / run / LEDGER_NAME))
    if not entries:
        return []
    held = parse_sacct(commands.squeue_lines({entry.job_id for entry in entries}))
    found: list[AliveElement] = []
    for entry in entries:
        for index in range(entry.elements):
            element = entry.job_id if entry.elements == 1 else f"{entry.job_id}_{index}"
            state = held.get(element) or held.get(array_id(element))
            if state is None or state.phase is Phase.ENDED:
                continue
            keys = entry.keys[index] if index < len(entry.keys) else ()
            found.append(
                AliveElement(
                    element=element,
                    state=state.state,
                    step_number=entry.step_number,
                    keys=len(keys),
                )
            )
    return found
