"""A tiny three-step pipeline, and a harness that SIGKILLs its orchestrator at a chosen call.

Run as ``python fault_pipeline.py ROOT [TARGET N WHEN]``. TARGET names a function as
``module:attribute`` (``stemma.storage.commit:append_rows``) or a method as
``module:Class.method`` (``stemma.storage.delta_store:DeltaStore.commit_wave``); the
process kills itself with SIGKILL at the Nth call of it, ``before`` or ``after`` the call
(WHEN). The patch lives here, in the test harness, never in production code. Without a target
the pipeline runs to completion and prints each step's output artifact ids as JSON.

Run as ``python fault_pipeline.py ROOT --variant NAME`` to run one of the variants the
concurrency tests start side by side (:data:`VARIANTS`).
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

VARIANTS: dict[str, tuple[int, float]] = {
    "shared": (0, 2.0),
    "shared-again": (0, 2.0),
    "other-seed": (7, 2.0),
    "other-scale": (0, 3.0),
}
"""Concurrency variants: (generator seed, transform scale). ``shared`` and ``shared-again`` ask
for identical keys in every step; ``other-scale`` shares only the generator step."""


def run_pipeline(
    root: str, *, seed: int = 0, scale: float = 2.0, must_succeed: bool = True
) -> dict[str, list[str]]:
    """Generate three datasets, transform each (one unit per dataset), score each.

    With ``must_succeed`` (the default) a run with any failed unit raises.

    Returns:
        Per step name, the sorted artifact ids it offers downstream.
    """
    pipeline = Pipeline.create("faults", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 4, "seed": seed})
    transformed = pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": scale},
        # one bundle per unit: each staging fault the tests inject hits exactly one unit
        execution={"artifacts_per_unit": 1, "units_per_worker": 1},
    )
    scored = pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    summary = pipeline.finalize()
    if must_succeed and not summary["overall_success"]:
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


def main(argv: list[str]) -> None:
    """Parse the command line (see the module docstring) and run."""
    root = argv[0]
    if len(argv) == 3 and argv[1] == "--variant":
        seed, scale = VARIANTS[argv[2]]
        print(json.dumps(run_pipeline(root, seed=seed, scale=scale)))
        return
    if len(argv) == 4:
        arm(argv[1], int(argv[2]), argv[3])
    print(json.dumps(run_pipeline(root)))


if __name__ == "__main__":
    main(sys.argv[1:])
