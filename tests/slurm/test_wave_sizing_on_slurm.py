"""SLURM array elements sized from history, on the real local cluster.

A step with ``units_per_worker`` unset: without history a probe wave of single units, then the
rest sized from what they took; with history (a step of the same operation) one array whose
elements each hold ``element_seconds`` of work. Counted from the sbatch scripts themselves.
"""

import math
import pathlib
import re

import pytest
from slurm_testing import CommandLog

from stemma.core.engine.wave_sizing import PROBE_UNITS
from stemma.core.examples import DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.store import open_pipeline_store

pytestmark = pytest.mark.slurm

UNITS = 40


def _elements(command_log: CommandLog) -> list[int]:
    """Per sbatch call, in order, how many elements its array had (a lone job: one)."""
    counts: list[int] = []
    for call in command_log.calls("sbatch"):
        script = pathlib.Path(call[-1]).read_text()
        found = re.search(r"^#SBATCH --array=(\d+)-(\d+)", script, re.MULTILINE)
        counts.append(1 if found is None else int(found[2]) - int(found[1]) + 1)
    return counts


def _transform(root: pathlib.Path, scale: float, **execution: object) -> tuple[Pipeline, float]:
    """Generate UNITS datasets and transform them one unit each; the step's recorded pace."""
    pipeline = Pipeline.create("sized", root=root, backend="slurm")
    generated = pipeline.run(DataGenerator, params={"count": UNITS, "rows": 2})
    step = pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": scale},
        execution={"artifacts_per_unit": 1, **execution},
    )
    summary = pipeline.finalize()
    assert summary["overall_success"] is True, summary
    assert step.succeeded_count == UNITS
    final = [
        e
        for e in open_pipeline_store(root).step_events(pipeline.run_id)
        if e.step_name == step.step_name and e.status == "completed"
    ]
    assert len(final) == 1
    return pipeline, float(final[0].metadata["unit_seconds"])


def test_elements_are_sized_by_a_probe_then_from_the_operation_s_history(
    slurm_cluster: None, tmp_path: pathlib.Path, command_log: CommandLog
) -> None:
    root = tmp_path / "store"
    _, pace = _transform(root, 2.0)
    assert 0 < pace < 60  # a Transform unit takes well under a second; recorded per unit
    # No history: the generator's one element, then a probe of single units, then the rest of
    # the step: far less than three minutes of work, spread over 8 elements to run at once.
    rest = UNITS - PROBE_UNITS
    assert _elements(command_log) == [1, PROBE_UNITS, math.ceil(rest / math.ceil(rest / 8))]

    # Other params (another fingerprint), the same operation: sized from its history at once,
    # five units' worth of work per element.
    _transform(root, 3.0, element_seconds=pace * 5.5)
    # (the generator is a step cache hit: no sbatch)
    assert _elements(command_log)[3:] == [math.ceil(UNITS / 5)]  # one array of 8 elements
