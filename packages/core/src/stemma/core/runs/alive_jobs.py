"""A dead run's work still in its scheduler: what ``stemma status``, the dashboard and reap show.

When a run's orchestrator dies, its scheduler jobs go on: pending elements still start, running
ones still finish and stage. Scheduler packages say which through the ``stemma.alive_jobs`` entry
point group: a callable ``alive(run_id, *, root) -> list[AliveElement]`` asking the scheduler
once for the run (stemma-slurm's is ``stemma.slurm.reap:alive_elements``). Core never imports a
scheduler package: without one installed, a run has no jobs to show.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from stemma.core import plugins

ALIVE_JOBS_GROUP = plugins.ALIVE_JOBS

AliveQuery = Callable[..., Sequence["AliveElement"]]


@dataclass(frozen=True, kw_only=True)
class AliveElement:
    """One element of a run's job array that its scheduler still holds."""

    element: str
    """The scheduler's id for it (``123_4``)."""
    state: str
    """The scheduler's word for where it is (``PENDING``, ``RUNNING``)."""
    step_number: int
    """The step of the run it computes units of."""
    keys: int
    """How many execution keys its units have in the run's ledger (0: the ledger recorded
    none, so a rerun cannot wait for it and submits its units again)."""


@dataclass(frozen=True, kw_only=True)
class AliveJobs:
    """What the installed schedulers said of one run's jobs."""

    elements: tuple[AliveElement, ...] = ()
    problem: str = ""
    """Why a scheduler could not be asked (empty when every one answered)."""

    @property
    def adoptable(self) -> int:
        """Elements a rerun (``stemma resume``) can wait for instead of submitting again."""
        return sum(1 for element in self.elements if element.keys)

    def summary(self) -> str:
        """``3 elements still in the scheduler: 1 RUNNING, 2 PENDING`` (empty when none)."""
        if not self.elements:
            return ""
        states = Counter(element.state for element in self.elements)
        counts = ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
        noun = "element" if len(self.elements) == 1 else "elements"
        return f"{len(self.elements)} {noun} still in the scheduler: {counts}"

    def by_step(self) -> dict[int, dict[str, int]]:
        """Per step number, how many of its elements are in each state."""
        steps: dict[int, dict[str, int]] = {}
        for element in self.elements:
            states = steps.setdefault(element.step_number, {})
            states[element.state] = states.get(element.state, 0) + 1
        return steps


def installed_queries() -> dict[str, AliveQuery]:
    """Every ``stemma.alive_jobs`` callable an installed package registers, by name."""
    return cast(dict[str, AliveQuery], plugins.callables(ALIVE_JOBS_GROUP))


def alive_jobs(root: Path, run_id: str) -> AliveJobs:
    """The elements of ``run_id`` its schedulers still hold (one query per scheduler).

    A scheduler that does not answer (its commands missing, its controller down) is said in
    ``problem``, not raised: the run's other facts are still worth showing.
    """
    elements: list[AliveElement] = []
    problems: list[str] = []
    for name, query in sorted(installed_queries().items()):
        try:
            elements.extend(query(run_id, root=root))
        except Exception as err:  # a scheduler's own error type: core cannot name it
            problems.append(f"{name}: {err}")
    return AliveJobs(elements=tuple(elements), problem="; ".join(problems))
