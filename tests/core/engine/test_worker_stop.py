"""A worker told to stop (a scheduler's time-limit warning): the running unit fails, the rest
of the pack is recorded as not started, and the pack is still staged with the finished units.

The warning is simulated by the operation calling ``worker_stop.stop`` from inside its execute,
which is where a signal handler would run it; the real signal is tested against the local SLURM
cluster in tests/slurm/test_preemption_and_timeouts.py.
"""

import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from worker_fakes import FakeStore, WtScale, final, group, make_unit

from stemma.core.backends import worker_stop
from stemma.core.engine.worker.output_capture import capture_output
from stemma.core.engine.worker.worker import run_pack
from stemma.core.operations import DataDraft, ExecuteInput, InputSpec, OutputSpec


class WarnedMidUnit(WtScale):
    """Scales like WtScale, but the time-limit warning arrives while it runs on the second dataset.

    The operation then tries to swallow it, as careless ``except Exception`` code would.
    """

    name = "wt_warned"
    inputs: ClassVar = {"data": InputSpec(artifact_type="data")}
    outputs: ClassVar = {
        "data": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["data"]})
    }

    def execute(self, inp: ExecuteInput) -> Any:
        if any(path.name.endswith("_2.csv") for path in inp.prepared["paths"]):
            try:
                worker_stop.stop("the job reached its time limit")
            except Exception:
                return "swallowed"
        return super().execute(inp)


@pytest.fixture(autouse=True)
def _fresh_worker() -> Any:
    worker_stop.clear()
    yield
    worker_stop.clear()


def test_a_stop_fails_the_running_unit_skips_the_rest_and_stages_the_finished(
    tmp_path: Path,
) -> None:
    inputs = [
        final(DataDraft.draft(f"x,y\n{i},{i}\n".encode(), f"design_{i}.csv")) for i in (1, 2, 3)
    ]
    store = FakeStore(tmp_path, inputs)
    units = [make_unit(WarnedMidUnit(), tmp_path, group(data=[artifact])) for artifact in inputs]

    reports = run_pack(units, store)

    assert [r.success for r in reports] == [True, False, False]
    assert store.packs == [3]  # staged together: the finished unit is kept
    interrupted, skipped = store.staged[1], store.staged[2]
    assert "WorkerStopping: the job reached its time limit" in (interrupted.error or "")
    assert "swallowed" not in str(interrupted.outputs)
    assert "WorkerStopping: not started: the job reached its time limit" in (skipped.error or "")
    assert skipped.artifacts == ()
    assert len(store.staged[0].artifacts) == 1  # the first unit's scaled copy


def test_outside_a_unit_a_stop_only_records_its_reason() -> None:
    worker_stop.stop("later")  # e.g. while the worker stages: nothing is cut short
    assert worker_stop.stop_reason() == "later"
    with pytest.raises(worker_stop.WorkerStopping, match="later"):
        worker_stop.check()
    worker_stop.clear()
    assert worker_stop.stop_reason() is None


def test_a_stop_while_file_descriptors_are_swapped_waits_until_they_are_restored(
    tmp_path: Path,
) -> None:
    out_before = sys.stdout

    def stopped_mid_swap() -> None:
        with (
            worker_stop.interruptible(),
            capture_output(tmp_path / "tool.log"),
            worker_stop.held(),
        ):
            worker_stop.stop("mid-swap")  # deferred: raised when the held block ends
            print("still captured")

    with pytest.raises(worker_stop.WorkerStopping, match="mid-swap"):
        stopped_mid_swap()
    assert sys.stdout is out_before
    assert "still captured" in (tmp_path / "tool.log").read_text()
