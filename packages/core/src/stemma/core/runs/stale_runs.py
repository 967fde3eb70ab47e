"""How a stale run is described: its orchestrator is gone, what of it still runs, what to do.

``stemma status`` prints these lines and the dashboard's run screen shows the same words, so a
stale run reads the same everywhere.
"""

from __future__ import annotations

from pathlib import Path

from stemma.core.runs.alive_jobs import AliveElement, AliveJobs, alive_jobs

STALE_WORDS = "stale (orchestrator gone)"
"""A stale run's status, in words: written running, but nothing writes it any more."""
SHOWN_PER_STEP = 8
"""Elements listed by id per step; the rest are counted."""


def stale_lines(root: Path, run_id: str) -> str:
    """What is left of a stale run in its scheduler (one query), and the two ways on."""
    return "\n".join(alive_lines(alive_jobs(root, run_id), run_id))


def alive_lines(jobs: AliveJobs, run_id: str) -> list[str]:
    """The lines for a stale run whose schedulers said ``jobs``: pure, for tests and screens."""
    lines: list[str] = []
    if jobs.problem:
        lines.append(f"  (could not ask the scheduler what still runs: {jobs.problem})")
    if not jobs.elements:
        lines.append(
            f"  nothing of it is left in a scheduler; `stemma resume {run_id}` starts it again "
            f"(what it finished is cached), `stemma reap {run_id}` settles it"
        )
        return lines
    lines.append(f"  {jobs.summary()}")
    for number, elements in sorted(_per_step(jobs.elements).items()):
        shown = ", ".join(f"{e.element} {e.state}" for e in elements[:SHOWN_PER_STEP])
        more = len(elements) - SHOWN_PER_STEP
        lines.append(f"    step {number}: {shown}" + (f" and {more} more" if more > 0 else ""))
    lines.append(
        f"  `stemma resume {run_id}` starts it again and waits for "
        f"{_them(jobs)}; `stemma reap {run_id}` cancels them and settles it"
    )
    return lines


def _them(jobs: AliveJobs) -> str:
    if jobs.adoptable == len(jobs.elements):
        return "them"
    if not jobs.adoptable:
        return "none of them (their ledger lines name no execution keys: it submits them again)"
    return f"the {jobs.adoptable} whose execution keys its ledger recorded"


def _per_step(elements: tuple[AliveElement, ...]) -> dict[int, list[AliveElement]]:
    steps: dict[int, list[AliveElement]] = {}
    for element in elements:
        steps.setdefault(element.step_number, []).append(element)
    return steps
