"""How many elements a scheduler wave of lazy function steps is cut into, from history.

Ready function steps that ask for the same resources go out as one array (``function_packs``):
one element per step, or, with the run's ``max_workers``, at most that many. A fan-out of 1,000
quick leaves would still be 1,000 scheduler jobs. So when ``max_workers`` is unset and every
step of the wave has a record of how long its function takes (its own earlier run, else the
newest run of any step calling the same function: a fan-out's leaves all call one), the wave is
cut like an operation's (``wave_sizing``): ``element_seconds`` of work per element (the least of
the steps'), never more than half the shortest time limit, spread over at least as many
elements as run at once (8). A step without a record keeps the wave at one element per step:
its cost is unknown, and a wave of function steps is its own probe (the next one is sized).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from stemma.core.engine.dispatch.wave_sizing import (
    DEFAULT_SPREAD,
    TIME_LIMIT_SHARE,
    unit_seconds_of,
)
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.run_context import RunContext
from stemma.core.execution_records import StepEvent
from stemma.core.operations.time_limits import time_limit_seconds

FUNCTION_KEY = "function"
"""The final event's metadata entry naming a function step's function (``module:qualname``)."""


def function_id(step: PlannedStep) -> str | None:
    """``module:qualname`` of a function step's function; None for any other step."""
    spec = getattr(step.operation, "lowered", None)  # (the orchestrator's copy holds it)
    fn = getattr(getattr(spec, "step", None), "fn", None)
    if fn is None:
        return None
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def wave_elements(ctx: RunContext, steps: Sequence[PlannedStep], most: int | None) -> int:
    """The elements a wave of these function steps' units (one each) is cut into.

    Args:
        ctx: the run (its completed steps are read once, as the step cache does).
        steps: the wave's steps, one unit each.
        most: the run's ``max_workers``: at most that many elements, and no sizing.
    """
    if not steps:
        return 0
    if most is not None:
        return min(len(steps), most)
    if ctx.step_index is None:
        ctx.step_index = ctx.store.completed_steps()
    seconds = [recorded_function_seconds(ctx.step_index, step) for step in steps]
    known = [s for s in seconds if s is not None]
    if len(known) < len(seconds):
        return len(steps)
    ceiling = TIME_LIMIT_SHARE * min(
        time_limit_seconds(step.operation.resources.time_limit) for step in steps
    )
    per_element = min(min(step.operation.execution.element_seconds for step in steps), ceiling)
    count = math.ceil(sum(known) / max(per_element, 1e-3))
    return max(1, min(len(steps), max(count, DEFAULT_SPREAD)))


def recorded_function_seconds(
    completed: Mapping[str, StepEvent], step: PlannedStep
) -> float | None:
    """Seconds of the step's function: its own last run, else the newest run of its function."""
    same = completed.get(step.fingerprint) if step.fingerprint is not None else None
    found = unit_seconds_of(same)
    if found is not None:
        return found
    fn = function_id(step)
    if fn is None:
        return None
    runs = [
        event
        for event in completed.values()
        if event.metadata.get(FUNCTION_KEY) == fn and unit_seconds_of(event) is not None
    ]
    return unit_seconds_of(max(runs, key=lambda event: event.timestamp, default=None))
