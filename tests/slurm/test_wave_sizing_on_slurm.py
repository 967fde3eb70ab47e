"""SLURM array elements sized from history, on the real local cluster.

A step with ``units_per_worker`` unset: without history a probe wave of single units, then the
rest sized from what they took; with history (a step of the same operation) one array whose
elements each hold ``element_seconds`` of work. Counted from the sbatch scripts themselves.
"""

import importlib
import math
import pathlib
import re
import sys
from typing import Any

import pytest
from slurm_testing import CommandLog

from stemma.core.engine.dispatch.wave_sizing import PROBE_UNITS
from stemma.core.examples import DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.store import open_run_store

pytestmark = pytest.mark.slurm

UNITS = 300
"""Enough to be probed without history (``PROBE_FROM_UNITS``)."""


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
        for e in open_run_store(root).step_events(pipeline.run_id)
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
    # thirty units' worth of work per element.
    _transform(root, 3.0, element_seconds=pace * 30.5)
    # (the generator is a step cache hit: no sbatch)
    assert _elements(command_log)[3:] == [math.ceil(UNITS / 30)]  # one array of 10 elements


def test_a_small_step_without_history_goes_out_one_unit_per_element_at_once(
    slurm_cluster: None, tmp_path: pathlib.Path, command_log: CommandLog
) -> None:
    pipeline = Pipeline.create("small", root=tmp_path / "store", backend="slurm")
    generated = pipeline.run(DataGenerator, params={"count": 6, "rows": 2})
    pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        execution={"artifacts_per_unit": 1},
    )
    assert pipeline.finalize()["overall_success"] is True
    assert _elements(command_log) == [1, 6]  # no probe: it would only add a round trip


def test_a_sized_element_that_dies_is_sent_again_in_smaller_elements(
    slurm_cluster: None, tmp_path: pathlib.Path, command_log: CommandLog
) -> None:
    sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "integration"))
    die_on_match = importlib.import_module("fault_operations").DieOnMatch
    root = tmp_path / "store"
    count = 32

    def copy_all(match: str, backend: str = "slurm") -> Any:
        pipeline = Pipeline.create("dying", root=root, backend=backend)
        generated = pipeline.run(DataGenerator, params={"count": count, "rows": 2})
        step = pipeline.run(
            die_on_match,
            inputs={"dataset": generated.output("datasets")},
            params={"match": match, "pause": 0.0},
            execution={"artifacts_per_unit": 1, "max_workers": 2},
        )
        pipeline.finalize()
        return step

    # The history, made locally (a unit's pace is the operation's, wherever it ran): 32
    # single-unit elements on the cluster would only take longer.
    assert copy_all("no such dataset", "local").success
    before = len(_elements(command_log))
    step = copy_all("dataset_5.")
    # Two elements of 16; the one holding the killer dies and goes again as 8 elements of 2;
    # the pair holding it dies and goes again as 2 elements of 1: only the killer fails.
    assert _elements(command_log)[before:] == [2, 8, 2]
    assert (step.succeeded_count, step.failed_count) == (count - 1, 1)
