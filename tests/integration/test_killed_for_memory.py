"""A worker or curator killed for memory records its peak and its host's memory (issue 33).

Each unit here holds a few hundred MiB and SIGKILLs its own process at once, as the OOM killer
would: too soon for any sample of ``/proc``, so the peak recorded is the kernel's own count, kept
as the worker is reaped. The facts are in the unit's execution row (``metadata.memory`` and its
error text) and in its failure log.
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
import pytest
from fault_operations import DieCurating, DieOnMatch, hold_and_die

from stemma.core import OUT, StepFailedError, apply, resolve
from stemma.core.backends import WorkerCrashedError
from stemma.core.backends.memory_at_death import cgroup_memory_limit
from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline
from stemma.storage import executions

MEGABYTES = 300
_FACTS = {"peak_rss_bytes", "system_total_bytes", "system_available_bytes", "cgroup_limit_bytes"}


def _failure_log(root: pathlib.Path) -> str:
    (log,) = sorted((root / "logs" / "failures").rglob("*.log"))
    return log.read_text()


def _memory_of_the_failed_row(root: pathlib.Path) -> tuple[dict[str, Any], str]:
    (row,) = executions(root, success=False).iter_rows(named=True)
    memory = json.loads(row["metadata"])["memory"]
    return memory, row["error"]


def _assert_recorded(root: pathlib.Path) -> None:
    memory, error = _memory_of_the_failed_row(root)
    assert set(memory) == _FACTS
    total, available = memory["system_total_bytes"], memory["system_available_bytes"]
    assert 0 < available <= total
    assert MEGABYTES << 20 <= memory["peak_rss_bytes"] < total  # what the unit held, at least
    assert memory["cgroup_limit_bytes"] == cgroup_memory_limit()  # None where there is none
    log = _failure_log(root)
    for text in (error, log):
        assert "(killed by SIGKILL, likely for memory: peak RSS " in text
        assert "GiB available; " in text
        assert f"peak_rss_bytes: {memory['peak_rss_bytes']} (" in text
        assert f"system_total_bytes: {total} (" in text
        assert f"system_available_bytes: {available} (" in text
        assert "give the operation more memory" in text


def test_a_creator_unit_killed_for_memory_records_its_peak_and_the_hosts_memory(
    tmp_path: pathlib.Path,
) -> None:
    pipeline = Pipeline.create("worker-oom", root=tmp_path, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    dying = pipeline.run(
        DieOnMatch,
        inputs={"dataset": generated.output("datasets")},
        params={"match": "_1.", "megabytes": MEGABYTES},
    )
    pipeline.finalize()
    assert (dying.succeeded_count, dying.failed_count) == (1, 1)
    _assert_recorded(tmp_path)


def test_a_function_step_killed_for_memory_records_its_peak_and_the_hosts_memory(
    tmp_path: pathlib.Path,
) -> None:
    step = apply(name="hog", fn=hold_and_die, version="v0", megabytes=MEGABYTES, out_path=OUT)
    with pytest.raises(StepFailedError) as failed:
        resolve(step, root=tmp_path, max_workers=1)
    cause = failed.value.__cause__
    assert isinstance(cause, WorkerCrashedError)  # the caller gets the facts too
    assert "(killed by SIGKILL, likely for memory: peak RSS " in str(cause)
    _assert_recorded(tmp_path)
    assert cause.memory == _memory_of_the_failed_row(tmp_path)[0]


def test_a_curator_killed_for_memory_records_its_peak_and_the_hosts_memory(
    tmp_path: pathlib.Path,
) -> None:
    pipeline = Pipeline.create("curator-oom", root=tmp_path, max_workers=1)
    datasets = pipeline.run(DataGenerator, params={"count": 1}).output("datasets")
    curating = pipeline.run(
        DieCurating, inputs={"dataset": datasets}, params={"megabytes": MEGABYTES}
    )
    pipeline.finalize()
    assert curating.failed_count == 1
    _assert_recorded(tmp_path)
    (row,) = executions(tmp_path, success=False).iter_rows(named=True)
    assert row["step_name"] == "test.die_curating"
