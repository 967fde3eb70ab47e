"""An operation that counts its unit starts, for the adoption tests (imported by name by jobs)."""

import os
import time
import uuid
from pathlib import Path
from typing import Any

from stemma.core.examples import SlowScale
from stemma.core.operations import ExecuteInput

RAN_DIR = "STEMMA_TEST_RAN_DIR"
GATE = "STEMMA_TEST_GATE"
"""A file the units wait for before they return (and stage), when set: the test opens the gate
once the run it means to watch them has adopted them."""


class CountedSlowScale(SlowScale):
    """``SlowScale`` that leaves a file per unit start in ``$STEMMA_TEST_RAN_DIR``."""

    name = "test.counted_slow_scale"

    def execute(self, inp: ExecuteInput) -> Any:
        ran = Path(os.environ[RAN_DIR])
        for path in inp.prepared["paths"]:
            job = f"{os.environ.get('SLURM_ARRAY_JOB_ID')}_{os.environ.get('SLURM_ARRAY_TASK_ID')}"
            (ran / f"{path.stem}.{uuid.uuid4().hex[:8]}").write_text(job)
        done = super().execute(inp)
        gate = os.environ.get(GATE)
        while gate and not Path(gate).exists():
            time.sleep(0.1)
        return done


def slow_square(i: int, seconds: float, out_path: str) -> int:
    """``i * i`` after ``seconds``, leaving a file per start in ``$STEMMA_TEST_RAN_DIR``."""
    (Path(os.environ[RAN_DIR]) / f"square_{i}.{uuid.uuid4().hex[:8]}").write_text("")
    time.sleep(seconds)
    Path(out_path).write_text(str(i * i))
    return i * i
