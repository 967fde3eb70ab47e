"""Staged bundles that are corrupt, or that appear late as on a slow shared filesystem."""

from __future__ import annotations

import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import stemma.storage.waves as waves
from stemma.core.execution_records import ExecutionRecord, StepOutputs
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.storage import EXECUTIONS, METRICS, STEP_OUTPUTS, DeltaStore, TableSpec
from stemma.storage.sentinel import SENTINEL
from stemma.storage.staging_checks import (
    STAGING_TIMEOUT_ENV,
    Backoff,
    ProblemKind,
    staging_timeout,
)

from .conftest import read_delta

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]


def _count(store: DeltaStore, spec: TableSpec) -> int:
    path = spec.path(store.layout.delta)
    return read_delta(path).height if path.exists() else 0


def _stage(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory, size: int = 3
) -> tuple[list[Path], StepOutputs]:
    """``size`` one-metric bundles of step ``1_score``, and the step's outputs."""
    records = [make_record([make_metric(i)]) for i in range(size)]
    ids = tuple(sorted(a.artifact_id for r in records for a in r.artifacts))
    return [store.stage_execution(r) for r in records], StepOutputs(
        step_run_id="run-1", outputs={"out": ids}
    )


def _truncate(file: Path) -> None:
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2])


def _later(seconds: float, action: Callable[[], object]) -> threading.Thread:
    def run() -> None:
        time.sleep(seconds)
        action()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.fixture
def slow_store(tmp_path: Path) -> DeltaStore:
    return DeltaStore(tmp_path / "root", staging_timeout=10)


# ---------------------------------------------------------------- corrupt files: quarantined


@pytest.mark.parametrize("damaged", [METRICS.staged_name, SENTINEL])
def test_wave_with_a_truncated_staged_file_quarantines_that_bundle_and_commits_the_rest(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory, damaged: str
) -> None:
    bundles, outputs = _stage(store, make_record, make_metric)
    bad = bundles[1]
    _truncate(bad / damaged)

    report = store.commit_wave(bundles, step_outputs=outputs)

    assert report.committed == 2
    (problem,) = report.problems
    assert problem.kind is ProblemKind.CORRUPT
    assert problem.bundle == bad
    assert problem.files == (damaged,)
    assert str(bad) in problem.error
    quarantined = store.layout.staging / ".quarantine" / "1_score" / bad.name
    assert problem.moved_to == quarantined
    assert (quarantined / damaged).is_file()  # kept, not deleted
    assert not bad.exists()
    note = store.layout.logs / "failures" / "step_1_score" / f"{bad.name}.staging.log"
    assert str(bad) in note.read_text()
    assert damaged in note.read_text()
    assert _count(store, EXECUTIONS) == 2
    offered = read_delta(STEP_OUTPUTS.path(store.layout.delta))
    assert offered.height == 2  # the quarantined unit's artifact is not offered downstream
    assert store.recover() == 0


def test_recover_quarantines_a_corrupt_bundle_and_commits_the_others(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundles, _ = _stage(store, make_record, make_metric)
    _truncate(bundles[0] / METRICS.staged_name)

    assert DeltaStore(store.layout.root).recover() == 2

    assert _count(store, EXECUTIONS) == 2
    assert (store.layout.staging / ".quarantine" / "1_score" / bundles[0].name).is_dir()
    assert list((store.layout.logs / "failures" / "step_1_score").glob("*.staging.log"))
    assert store.recover() == 0


def test_recover_finishes_a_sealed_wave_whose_bundle_turned_corrupt(
    store: DeltaStore,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundles, outputs = _stage(store, make_record, make_metric)
    waves_dir = store.layout.staging / ".waves"

    def die(*args: object, **kwargs: object) -> bool:
        raise KeyboardInterrupt  # the committer stops once the wave is sealed

    with monkeypatch.context() as patch:
        patch.setattr(waves, "commit_frames", die)
        with pytest.raises(KeyboardInterrupt):
            store.commit_wave(bundles, step_outputs=outputs)
    (claimed,) = waves_dir.glob(f"*/bundles/1_score/{bundles[2].name}")
    _truncate(claimed / METRICS.staged_name)

    assert store.recover() == 2

    assert _count(store, EXECUTIONS) == 2
    assert (store.layout.staging / ".quarantine" / "1_score" / bundles[2].name).is_dir()
    assert not list(waves_dir.iterdir())


_QUARANTINE_THEN_DIE = """
import os, pickle, signal, sys
from pathlib import Path
import stemma.storage.waves as waves
from stemma.storage import DeltaStore

def die(*args, **kwargs):  # the bundle is quarantined; the wave is not sealed again yet
    os.kill(os.getpid(), signal.SIGKILL)

waves.write_manifest = die
bundles = pickle.loads(Path(sys.argv[2]).read_bytes())
DeltaStore(Path(sys.argv[1])).commit_wave(bundles)
"""


def test_kill_9_between_quarantine_and_resealing_then_recover_commits_the_rest_once(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory, tmp_path: Path
) -> None:
    bundles, _ = _stage(store, make_record, make_metric)
    _truncate(bundles[1] / METRICS.staged_name)
    pickled = tmp_path / "bundles.pickle"
    pickled.write_bytes(pickle.dumps(bundles))

    child = subprocess.run(
        [sys.executable, "-c", _QUARANTINE_THEN_DIE, str(store.layout.root), str(pickled)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert child.returncode == -signal.SIGKILL, child.stderr
    assert (store.layout.staging / ".quarantine" / "1_score" / bundles[1].name).is_dir()
    assert _count(store, EXECUTIONS) == 0
    assert DeltaStore(store.layout.root).recover() == 2
    assert store.recover() == 0
    assert _count(store, EXECUTIONS) == 2
    assert _count(store, METRICS) == 2


# ---------------------------------------------------------------- late files: waited for


def test_wave_waits_for_a_listed_file_that_appears_late_and_commits_it(
    slow_store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundles, outputs = _stage(slow_store, make_record, make_metric)
    late = bundles[1] / METRICS.staged_name
    hidden = late.with_name("hidden")
    late.rename(hidden)
    thread = _later(0.5, lambda: hidden.rename(late))

    started = time.monotonic()
    report = slow_store.commit_wave(bundles, step_outputs=outputs)
    thread.join()

    assert report.committed == 3
    assert report.problems == ()
    assert 0.4 < time.monotonic() - started < 10
    assert _count(slow_store, METRICS) == 3


def test_wave_waits_for_a_bundle_directory_that_appears_late(
    slow_store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundles, outputs = _stage(slow_store, make_record, make_metric)
    aside = bundles[0].with_name("not-yet")
    bundles[0].rename(aside)
    thread = _later(0.5, lambda: aside.rename(bundles[0]))

    report = slow_store.commit_wave(bundles, step_outputs=outputs)
    thread.join()

    assert report.committed == 3
    assert _count(slow_store, EXECUTIONS) == 3


def test_wave_gives_up_at_the_timeout_commits_the_rest_and_records_what_was_missing(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    store = DeltaStore(tmp_path / "root", staging_timeout=0.5)
    bundles, outputs = _stage(store, make_record, make_metric)
    late = bundles[2] / METRICS.staged_name
    hidden = tmp_path / "hidden"
    late.rename(hidden)

    started = time.monotonic()
    report = store.commit_wave(bundles, step_outputs=outputs)

    assert time.monotonic() - started < 5  # bounded by the timeout, not forever
    assert report.committed == 2
    (problem,) = report.problems
    assert (problem.kind, problem.bundle, problem.files) == (
        ProblemKind.MISSING,
        bundles[2],
        (METRICS.staged_name,),
    )
    assert problem.to_dict()["kind"] == "missing"
    note = store.layout.logs / "failures" / "step_1_score" / f"{bundles[2].name}.staging.log"
    assert METRICS.staged_name in note.read_text()
    assert bundles[2].is_dir()  # left in staging, not quarantined
    assert _count(store, EXECUTIONS) == 2
    assert read_delta(STEP_OUTPUTS.path(store.layout.delta)).height == 2

    hidden.rename(late)  # it shows up at last: the next start commits it, once
    assert store.recover() == 1
    assert store.recover() == 0
    assert _count(store, EXECUTIONS) == 3
    assert _count(store, METRICS) == 3


def test_wave_of_a_bundle_committed_elsewhere_does_not_wait(
    slow_store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundles, outputs = _stage(slow_store, make_record, make_metric)
    assert slow_store.commit_wave(bundles, step_outputs=outputs).committed == 3

    started = time.monotonic()
    report = slow_store.commit_wave(bundles[:2])

    assert report.committed == 0
    assert report.problems == ()
    assert time.monotonic() - started < 5


def test_backoff_grows_exponentially_and_stops_at_the_deadline() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    backoff = Backoff(deadline=2.0, delay=0.1, cap=0.8, clock=lambda: now[0], sleep=sleep)
    while backoff.wait():
        pass

    assert now[0] == pytest.approx(2.0)
    assert all(0.05 <= s <= 1.2 for s in slept[:-1])  # the last one stops at the deadline
    assert slept[0] < 0.16
    assert max(slept) > 0.3


@pytest.mark.parametrize(("value", "expected"), [(None, 30.0), ("2.5", 2.5), ("0", 0.0)])
def test_staging_timeout_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: float
) -> None:
    if value is None:
        monkeypatch.delenv(STAGING_TIMEOUT_ENV, raising=False)
    else:
        monkeypatch.setenv(STAGING_TIMEOUT_ENV, value)
    assert staging_timeout() == expected
    assert staging_timeout(4) == 4.0


@pytest.mark.parametrize("value", ["soon", "-1"])
def test_staging_timeout_refuses_a_bad_value_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str
) -> None:
    monkeypatch.setenv(STAGING_TIMEOUT_ENV, value)
    with pytest.raises(ValueError, match="seconds"):
        DeltaStore(tmp_path)
