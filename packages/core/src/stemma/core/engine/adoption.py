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
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import Future
from typing import Any

from stemma.core.backends.base import AdoptedElement, Backend, WaveRequest
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.units import ExecutionUnit

log = logging.getLogger(__name__)

Adopt = Callable[[Collection[str], WaveRequest], Iterable[AdoptedElement]]


def adopt_in_flight(
    backend: Backend, step: PlannedStep, units: list[ExecutionUnit], request: WaveRequest
) -> tuple[list[ExecutionUnit], list[tuple[Future[Any], list[ExecutionUnit]]]]:
    """Split ``units`` into those still to send and the packs already running elsewhere.

    Returns:
        The units to send, and per adopted element its future and the units it computes (the
        rerun's own, in the element's order).
    """
    adopt: Adopt | None = getattr(backend, "adopt", None)
    if adopt is None or not units or step.skip_cache:
        return units, []
    by_key = {unit.execution_spec_id: unit for unit in units}
    taken: set[str] = set()
    packs: list[tuple[Future[Any], list[ExecutionUnit]]] = []
    runs: set[str] = set()
    for element in adopt(by_key.keys(), request):
        # (the backend offers only elements of wanted keys, each key once: checked again here,
        # because a key committed twice is the one thing adoption must never cause)
        if not taken.isdisjoint(element.keys) or not all(k in by_key for k in element.keys):
            continue
        taken.update(element.keys)
        packs.append((element.future, [by_key[key] for key in element.keys]))
        runs.add(element.run_id)
    if not packs:
        return units, []
    log.info(
        "step %s: %d of its units are still running on the cluster for %s: waiting for "
        "those %d jobs instead of sending them again",
        step.name,
        len(taken),
        ", ".join(sorted(runs)),
        len(packs),
    )
    return [unit for unit in units if unit.execution_spec_id not in taken], packs
