"""Refusing, before anything runs, an operation a worker process could not be sent.

A process backend pickles each unit's operation by reference to its class: a class defined
inside a function (or otherwise not importable by name) fails there, in every unit, and the
run would end with nothing but pickling errors. Both front doors check at submission instead.
"""

from __future__ import annotations

import pickle
from typing import Any

from stemma.core.errors import UnpicklableStepError

THREAD_BACKEND = "local-thread"
"""The one backend that runs units in this process: nothing is pickled."""


def refuse_unsendable_operation(step_name: str, operation: Any, backend: str) -> None:
    """Raise if ``operation`` cannot be pickled for a ``backend`` worker (never for threads).

    Raises:
        UnpicklableStepError: naming the step, the class and the two fixes.
    """
    if backend == THREAD_BACKEND:
        return
    try:
        pickle.dumps(operation)
    except Exception as err:
        name = type(operation).__qualname__
        raise UnpicklableStepError(
            f"step {step_name!r}: its operation {name} cannot be sent to a {backend!r} worker "
            f"({type(err).__name__}: {err}). Define the class at the top level of an importable "
            f"module (not inside a function), or run in this process with backend="
            f"{THREAD_BACKEND!r}"
        ) from None
