"""``fail_fast`` in the workers: a failed unit marks its step, and no unit starts behind the mark.

The orchestrator's half (the marker's path, halting the run) is
:mod:`stemma.core.engine.cancel.fail_fast`; this is what a worker needs of it, and nothing of
the orchestrator's.
"""

from __future__ import annotations

import os
from pathlib import Path

from stemma.core.engine.worker.units import ExecutionUnit

NOT_STARTED = "a unit of the step failed under fail_fast"
"""Why a unit of a ``fail_fast`` step never started."""


def failed_fast(unit: ExecutionUnit) -> bool:
    """Whether a unit of ``unit``'s step has already failed under ``fail_fast``."""
    return unit.fail_fast_file is not None and os.path.exists(unit.fail_fast_file)


def mark_failed_fast(unit: ExecutionUnit) -> None:
    """Tell the step's other workers a unit failed; best effort.

    (The orchestrator stops the step anyway when the failure comes back.)
    """
    if unit.fail_fast_file is None:
        return
    path = Path(unit.fail_fast_file)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass
