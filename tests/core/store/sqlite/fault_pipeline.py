"""A three-step pipeline on the SQLite store whose orchestrator SIGKILLs itself at a chosen call.

Run as ``python fault_pipeline.py ROOT [TARGET N WHEN]``. TARGET names a function as
``module:attribute`` or a method as ``module:Class.method``; the process kills itself with
SIGKILL at the Nth call of it, ``before`` or ``after`` the call (WHEN). Without a target the
pipeline runs to completion. Either way it prints each step's output artifact ids as JSON.
The store is chosen by ``STEMMA_STORE=sqlite``, which the workers inherit.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from stemma.core.examples import DataGenerator, MetricCalculator, Transform
from stemma.core.front.pipeline import Pipeline


def run_pipeline(root: str) -> dict[str, list[str]]:
    """Generate three datasets, transform each (one bundle per unit), score each."""
    pipeline = Pipeline.create("faults", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 4})
    transformed = pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": 2.0},
        execution={"artifacts_per_unit": 1, "units_per_worker": 1},
    )
    scored = pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    summary = pipeline.finalize()
    if not summary["overall_success"]:
        raise RuntimeError(f"the pipeline did not succeed: {summary}")
    return {
        "generate": sorted(pipeline.artifact_ids(generated.output("datasets"))),
        "transform": sorted(pipeline.artifact_ids(transformed.output("dataset"))),
        "score": sorted(pipeline.artifact_ids(scored.output("metrics"))),
    }


def arm(target: str, nth: int, when: str) -> None:
    """Replace ``target`` so that its ``nth`` call SIGKILLs this process ``when`` it is made."""
    module_name, _, attribute = target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original: Callable[..., Any] = getattr(owner, name)
    calls = 0

    @functools.wraps(original)
    def dying(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == nth and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = original(*args, **kwargs)
        if calls == nth and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(owner, name, dying)


if __name__ == "__main__":
    if len(sys.argv) == 5:
        arm(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    print(json.dumps(run_pipeline(sys.argv[1])))
