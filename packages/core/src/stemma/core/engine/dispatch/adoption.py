"""Waiting for work a dead run left on a scheduler instead of sending its units again.

When an orchestrator dies, the SLURM elements it submitted go on running. A rerun (a new run,
``Pipeline.resume``, or a lazy ``run()`` of the same graph) that misses the cache for their
execution keys asks the backend for them (``adopt``) before it sends anything: each element
found becomes a pack of the rerun's own units, in the order the element computes them, and is
waited for like a pack just sent. Its outcomes name the bundles it staged, which the step
commits as its own; recovery never commits a bundle twice.

An adopted element that dies is sent again once, as a fresh pack of the same units: the rerun
owns those units now. Nothing is adopted for a step that skips the cache: the user asked for
the work to be done again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from stemma.core.backends.base import AdoptedElement, Backend, WaveRequest
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.worker.units import ExecutionUnit

log = logging.getLogger(__name__)

_T = TypeVar("_T")

Adopt = Callable[[Collection[str], WaveRequest], Iterable[AdoptedElement]]


def adopt_in_flight(
    backend: Backend, step: PlannedStep, units: list[ExecutionUnit], request: WaveRequest
) -> tuple[list[ExecutionUnit], list[tuple[Future[Any], list[ExecutionUnit]]]]:
    """Split a step's ``units`` into those still to send and the packs already running elsewhere.

    Returns:
        The units to send, and per adopted element its future and the units it computes (the
        rerun's own, in the element's order).
    """
    if step.skip_cache:
        return units, []
    packs = adopted_packs(backend, {unit.execution_spec_id: unit for unit in units}, request)
    if not packs:
        return units, []
    taken = {id(unit) for _, pack in packs for unit in pack}
    return [unit for unit in units if id(unit) not in taken], packs


def adopted_packs(
    backend: Backend, wanted: Mapping[str, _T], request: WaveRequest
) -> list[tuple[Future[Any], list[_T]]]:
    """The elements the backend adopts among ``wanted`` (by execution key), as packs of its values.

    Empty when the backend cannot adopt (its jobs do not outlive their orchestrator).
    """
    adopt: Adopt | None = getattr(backend, "adopt", None)
    if adopt is None or not wanted:
        return []
    taken: set[str] = set()
    packs: list[tuple[Future[Any], list[_T]]] = []
    runs: set[str] = set()
    try:
        elements = list(adopt(wanted.keys(), request))
    except Exception as error:  # never a reason not to run: the units are sent as misses are
        log.warning("could not look for work left running by dead runs: %s", error)
        return []
    for element in elements:
        # (the backend offers only elements of wanted keys, each key once: checked again here,
        # because a key committed twice is the one thing adoption must never cause)
        if not taken.isdisjoint(element.keys) or not all(k in wanted for k in element.keys):
            continue
        taken.update(element.keys)
        packs.append((element.future, [wanted[key] for key in element.keys]))
        runs.add(element.run_id)
    if packs:
        log.info(
            "%d units of %s are still running on the cluster for %s: waiting for those %d "
            "jobs instead of sending them again",
            len(taken),
            request.job_name,
            ", ".join(sorted(runs)),
            len(packs),
        )
    return packs
