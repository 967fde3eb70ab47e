"""A lazy step's ``running`` event: in its bundle when it is quick, on its own when it is long."""

from __future__ import annotations

import pathlib
import threading
import time
from collections.abc import Sequence

import polars as pl
import pytest
from deltalake import DeltaTable

from stemma.core import OUT, ArtifactStep, StepFailedError, apply, run
from stemma.core.engine import engine_run
from stemma.core.execution_records import ExecutionRecord
from stemma.storage import DeltaStore, steps
from stemma.storage.schemas import STEPS
from stemma.storage.worker_store import DeltaWorkerStore


def touch(i: int, out_path: str) -> None:
    pathlib.Path(out_path).write_text(str(i))


def wait_for(flag: str, out_path: str) -> None:
    deadline = time.monotonic() + 60
    while not pathlib.Path(flag).exists():
        assert time.monotonic() < deadline, "the test never saw the step running"
        time.sleep(0.05)
    pathlib.Path(out_path).write_text("done")


def _statuses(root: pathlib.Path) -> dict[str, list[str]]:
    log = steps(root).sort("timestamp")
    return {
        name: group["status"].to_list()
        for (name,), group in log.group_by("step_name", maintain_order=True)
    }


def test_quick_steps_commit_their_running_event_with_their_outcome(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_run, "OPEN_STEPS_RECORDED_AFTER", 30.0)  # no step is "long" here
    chain: ArtifactStep = apply(name="s0", fn=touch, version="v0", i=0, out_path=OUT)
    for i in range(1, 5):
        chain = apply(name=f"s{i}", fn=touch, version="v0", i=chain, out_path=OUT)
    run(chain, root=tmp_path, parallel_steps=1)
    assert _statuses(tmp_path) == {f"s{i}": ["running", "completed"] for i in range(5)}
    # One commit of the steps table per step (its bundle), not one more for its start.
    history = DeltaTable(str(STEPS.path(tmp_path / "delta"))).history()
    appends = [c for c in history if c["operation"] == "WRITE"]
    assert len(appends) == 5, [c["operation"] for c in history]


def test_a_long_step_shows_running_in_the_history_while_it_runs(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_run, "OPEN_STEPS_RECORDED_AFTER", 0.2)
    flag = tmp_path / "go"
    step = apply(name="long", fn=wait_for, version="v0", flag=str(flag), out_path=OUT)
    root = tmp_path / "root"
    thread = threading.Thread(target=run, args=(step,), kwargs={"root": root})
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while (
            not STEPS.path(root / "delta").exists()
            or steps(root).filter(pl.col("step_name") == "long").is_empty()
        ):
            assert time.monotonic() < deadline, "the long step's running event never arrived"
            time.sleep(0.05)
        assert _statuses(root) == {"long": ["running"]}
    finally:
        flag.touch()
        thread.join(60)
    assert _statuses(root) == {"long": ["running", "completed"]}  # its start recorded once


def test_a_step_whose_staging_fails_still_records_its_running_event(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(self: object, records: ExecutionRecord | Sequence[ExecutionRecord]) -> None:
        raise OSError("no space left on device")

    for store in (DeltaStore, DeltaWorkerStore):  # the workers are threads here, and stage
        for method in ("stage_execution", "stage_executions"):  # through the worker store
            monkeypatch.setattr(store, method, disk_full)
    step = apply(name="unstaged", fn=touch, version="v0", i=0, out_path=OUT)
    with pytest.raises(StepFailedError, match="unstaged"):
        run(step, root=tmp_path, backend="local-thread")
    assert _statuses(tmp_path) == {"unstaged": ["running", "failed"]}
    (failed,) = steps(tmp_path).filter(pl.col("status") == "failed").iter_rows(named=True)
    assert "no space left on device" in (failed["error"] or "")
