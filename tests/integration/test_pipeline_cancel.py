"""``Pipeline.cancel`` from Python, and the signal handlers' lifetime, in this process."""

from __future__ import annotations

import pathlib
import signal
import threading
import time

import pytest

from stemma.core.examples import DataGenerator, SlowCopy, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.live import RunStatus, read_state


def test_handlers_are_ours_from_the_opening_and_restored_by_finalize(
    tmp_path: pathlib.Path,
) -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    pipeline = Pipeline.create("handlers", root=tmp_path, max_workers=1)
    # Ours since the run began opening: a press before its first step cancels it (issue 33).
    assert signal.getsignal(signal.SIGINT) is not before[0]
    pipeline.run(DataGenerator, params={"count": 1, "rows": 2})
    assert signal.getsignal(signal.SIGINT) is not before[0]
    assert signal.getsignal(signal.SIGTERM) is not before[1]
    pipeline.finalize()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_handlers_are_never_installed_off_the_main_thread(tmp_path: pathlib.Path) -> None:
    before = signal.getsignal(signal.SIGINT)
    seen: list[object] = []

    def in_a_thread() -> None:
        pipeline = Pipeline.create("threaded", root=tmp_path, max_workers=1)
        pipeline.run(DataGenerator, params={"count": 1, "rows": 2})
        seen.append(signal.getsignal(signal.SIGINT))
        pipeline.finalize()

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join(timeout=120)
    assert seen == [before]


def _slow_step_running(root: pathlib.Path, run_id: str) -> bool:
    steps = read_state(root, run_id).steps
    return len(steps) > 1 and steps[1].running > 0


def test_cancel_from_python_stops_the_slow_step_and_skips_the_rest(
    tmp_path: pathlib.Path,
) -> None:
    pipeline = Pipeline.create("from-python", root=tmp_path, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 6, "rows": 3})
    copied = pipeline.submit(
        SlowCopy, inputs={"dataset": generated.output("datasets")}, params={"seconds": 1.0}
    )
    after = pipeline.submit(Transform, inputs={"dataset": copied.output("dataset")})
    deadline = time.monotonic() + 120
    while not _slow_step_running(tmp_path, pipeline.run_id):
        assert time.monotonic() < deadline, "the slow step never started"
        time.sleep(0.02)
    pipeline.cancel()
    pipeline.cancel(1)  # idempotent
    copy_result, after_result = copied.result(), after.result()
    assert copy_result.metadata["status"] == "cancelled"
    assert not copy_result.success
    assert after_result.metadata["status"] == "skipped"
    assert after_result.metadata["skip_reason"] == "cancelled"
    summary = pipeline.finalize()
    assert summary["overall_success"] is False
    assert read_state(tmp_path, pipeline.run_id).status is RunStatus.CANCELLED


def test_cancel_rejects_an_unknown_level(tmp_path: pathlib.Path) -> None:
    pipeline = Pipeline.create("bad-level", root=tmp_path, max_workers=1)
    with pytest.raises(ValueError, match="unknown cancellation level"):
        pipeline.cancel("gently")
    pipeline.finalize()


def test_cancel_before_any_step_skips_every_step_and_dispatches_nothing(
    tmp_path: pathlib.Path,
) -> None:
    pipeline = Pipeline.create("early-cancel", root=tmp_path, max_workers=1)
    pipeline.cancel()
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    assert generated.metadata["status"] == "skipped"
    assert generated.metadata["skip_reason"] == "cancelled"
    assert generated.total_count == 0
    pipeline.finalize()
    assert not (tmp_path / "working").exists() or not any((tmp_path / "working").iterdir())
    state = read_state(tmp_path, pipeline.run_id)
    assert state.status is RunStatus.CANCELLED
    assert [step.status for step in state.steps] == ["skipped"]
