"""Curators run beside the orchestrator, in a fresh subprocess of their step, never in the pool."""

import json
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
import polars as pl
from curator_probe import WhereCurated

from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline
from stemma.storage import executions


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie holds no memory: it does not count)."""
    try:
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "zombie" not in status


def test_each_curator_step_runs_in_its_own_subprocess_and_records_its_peak(
    tmp_path: pathlib.Path,
) -> None:
    report = tmp_path / "report"
    report.mkdir()
    pipeline = Pipeline.create("curators", root=tmp_path / "store", max_workers=2)
    datasets = pipeline.run(DataGenerator, params={"count": 3}).output("datasets")
    first = pipeline.run(WhereCurated, inputs={"dataset": datasets}, params={"report": str(report)})
    ran_in = json.loads((report / "1.json").read_text())["pid"]
    assert not _alive(ran_in)  # gone once its step ended, its memory with it (a pool's is not)
    second = pipeline.run(
        WhereCurated,
        inputs={"dataset": first.output("dataset")},
        params={"report": str(report), "megabytes": 300},
    )
    assert pipeline.finalize()["overall_success"] is True
    where = [json.loads((report / f"{n}.json").read_text()) for n in (1, 2)]
    assert [w["ppid"] for w in where] == [os.getpid(), os.getpid()]  # a child of this process
    assert where[0]["pid"] != where[1]["pid"]  # fresh for each step, not a long-lived worker
    assert second.succeeded_count == 1
    curated = executions(tmp_path / "store").filter(pl.col("step_name") == "test.where_curated")
    peaks = sorted(json.loads(m)["peak_rss_mb"] for m in curated["metadata"])
    assert peaks[0] > 0
    assert peaks[1] >= 300  # the second step held 300 MiB: its own process's peak, recorded
    assert set(curated["backend"]) == {"local"}


def test_a_force_cancel_stops_a_running_curator_subprocess(tmp_path: pathlib.Path) -> None:
    report = tmp_path / "report"
    report.mkdir()
    pipeline = Pipeline.create("cancelled", root=tmp_path / "store", max_workers=1)
    datasets = pipeline.run(DataGenerator, params={"count": 1}).output("datasets")
    curating = pipeline.submit(
        WhereCurated, inputs={"dataset": datasets}, params={"report": str(report), "seconds": 300}
    )
    noted = report / "1.json"
    deadline = time.monotonic() + 60
    while not noted.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    pid = json.loads(noted.read_text())["pid"]
    assert _alive(pid)
    pipeline.cancel("force")
    result = curating.result()  # not 300 s later: its process was terminated
    pipeline.finalize()
    assert result.cancelled_count == 1
    assert not _alive(pid)
