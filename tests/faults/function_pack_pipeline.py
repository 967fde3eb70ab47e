"""Lazy function steps enough to share packs: ``python function_pack_pipeline.py ROOT``.

Run by ``test_worker_killed_after_staging.py`` with a worker killed just after it staged a pack
of several function steps' units. Prints, as JSON, each step's value. The function is
importable by name, so workers find it.
"""

from __future__ import annotations

import json
import pathlib
import sys

from stemma.core import OUT, apply, run

STEPS = 12


def write_number(n: int, out_path: str) -> int:
    """Write ``n`` as the step's output; return it."""
    pathlib.Path(out_path).write_text(str(n))
    return n


def run_pipeline(root: str) -> list[int]:
    """Run ``STEPS`` independent function steps on one worker; their values, in order."""
    steps = [apply(f"n{i}", write_number, version="v0", n=i, out_path=OUT) for i in range(STEPS)]
    results = run(
        *steps, root=root, backend="local", max_workers=1, parallel_steps=STEPS, name="fpacks"
    )
    return [result.value for result in results]


if __name__ == "__main__":
    print(json.dumps(run_pipeline(sys.argv[1])))
