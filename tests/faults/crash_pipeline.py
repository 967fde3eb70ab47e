"""The small pipeline the crash-point tests kill at each durable write point, then finish.

``python crash_pipeline.py ROOT [BACKEND]`` runs one lazy graph on ROOT: two operation steps (a
creator making two datasets; a unit step transforming each, its two units in one pack) and a
function step publishing ``OUT``, one step at a time on one worker, so every run reaches its
points in the same order. It prints, as JSON, what the steps offer downstream. It knows nothing
of crashes: the harness arms them through the environment (``STEMMA_CRASH_LOG``,
``STEMMA_CRASH_AT``; see ``stemma.core.crash_points``). The function is importable by name, so
workers (local or SLURM) find it.
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

from stemma.core import OUT, apply, run
from stemma.core.examples import DataGenerator, Transform


def write_words(words: list[str], out_path: str) -> int:
    """Write ``words`` as the step's output; return how many."""
    pathlib.Path(out_path).write_text(" ".join(words))
    return len(words)


def run_pipeline(root: str, backend: str = "local") -> dict[str, Any]:
    """Run the graph; return the transformed datasets' ids and the function's value."""
    generated = apply("gen", DataGenerator, params={"count": 2, "rows": 3, "seed": 5})
    transformed = apply("scale", Transform, params={"scale": 2.0}, dataset=generated)
    words = apply(
        "words", write_words, version="v0", words=["crash", "every", "point"], out_path=OUT
    )
    scaled, written = run(
        transformed,
        words,
        root=root,
        backend=backend,
        max_workers=1,
        parallel_steps=1,
        name="crashes",
    )
    outputs: dict[str, list[str]] = scaled.value["outputs"]
    return {"scale": sorted(outputs["dataset"]), "words": written.value}


if __name__ == "__main__":
    print(json.dumps(run_pipeline(*sys.argv[1:3])))
