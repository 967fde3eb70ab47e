from __future__ import annotations

import pickle
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from stemma.core.execution_records import ExecutionRecord, StepOutputs
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.storage import (
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    METRICS,
    STEP_OUTPUTS,
    DeltaStore,
    TableSpec,
)
from stemma.storage.sentinel import SENTINEL

from .conftest import delta_transactions, read_delta

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]
WAVE_TABLES = (METRICS, ARTIFACT_INDEX, EXECUTION_EDGES, STEP_OUTPUTS, EXECUTIONS)

_COMMIT_THEN_DIE = """
import os, pickle, signal, sys
from pathlib import Path
import stemma.storage.commit as commit
import stemma.storage.wave_claim as wave_claim
from stemma.storage import DeltaStore

if sys.argv[3] == "after-first-table":
    original = commit.append_rows
    def dying(*args, **kwargs):
        wrote = original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
        return wrote
    commit.append_rows = dying
else:  # while claiming: after the second bundle was moved into the wave
    original_rename = wave_claim.os.rename
    moved = []
    def dying_rename(source, target):
        original_rename(source, target)
        moved.append(target)
        if len(moved) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
    wave_claim.os.rename = dying_rename
bundles, outputs = pickle.loads(Path(sys.argv[2]).read_bytes())
DeltaStore(Path(sys.argv[1])).commit_wave(bundles, step_outputs=outputs)
"""


def _count(store: DeltaStore, spec: TableSpec) -> int:
    path = spec.path(store.layout.delta)
    return read_delta(path).height if path.exists() else 0


def _wave(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory, size: int = 4
) -> tuple[list[Path], StepOutputs]:
    """``size`` bundles of two metrics each; metric 0 is in every bundle (a duplicate)."""
    records = [make_record([make_metric(0), make_metric(i + 1)]) for i in range(size)]
    ids = sorted({a.artifact_id for r in records for a in r.artifacts})
    outputs = StepOutputs(step_run_id="run-1", outputs={"out": tuple(ids)})
    return [store.stage_execution(r) for r in records], outputs


def test_commit_wave_writes_each_table_once_and_dedupes_within_the_wave(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundles, outputs = _wave(store, make_record, make_metric)
    assert all(b.parent.parent.parent.name == "1_score" for b in bundles)
    assert all((b / SENTINEL).is_file() for b in bundles)

    assert store.commit_wave(bundles, step_outputs=outputs).committed == 4

    assert {spec.name: _count(store, spec) for spec in WAVE_TABLES} == {
        METRICS.name: 5,
        ARTIFACT_INDEX.name: 5,
        EXECUTION_EDGES.name: 8,
        STEP_OUTPUTS.name: 5,
        EXECUTIONS.name: 4,
    }
    for spec in WAVE_TABLES:
        (transaction,) = delta_transactions(store, spec)
        assert transaction.startswith("stemma-wave-")
    assert not any(b.exists() for b in bundles)
    assert store.recover() == 0


def test_commit_wave_dedupes_artifacts_against_earlier_waves(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    first, _ = _wave(store, make_record, make_metric, size=2)
    second, _ = _wave(store, make_record, make_metric, size=3)

    assert store.commit_wave(first).committed == 2
    assert store.commit_wave(second).committed == 3

    assert _count(store, METRICS) == 4
    assert _count(store, ARTIFACT_INDEX) == 4
    assert _count(store, EXECUTIONS) == 5


def test_commit_wave_same_wave_again_adds_nothing(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    records = [make_record([make_metric(i)]) for i in range(3)]
    bundles = [store.stage_execution(r) for r in records]
    outputs = StepOutputs(step_run_id="run-1", outputs={"out": ("a" * 32,)})
    assert store.commit_wave(bundles, step_outputs=outputs).committed == 3
    counts = {spec.name: _count(store, spec) for spec in WAVE_TABLES}

    assert store.commit_wave(bundles, step_outputs=outputs).committed == 0  # bundles are gone
    restaged = [store.stage_execution(r) for r in records]  # a worker staged them again
    assert restaged == bundles
    assert store.commit_wave(restaged, step_outputs=outputs).committed == 0

    assert {spec.name: _count(store, spec) for spec in WAVE_TABLES} == counts
    assert not any(b.exists() for b in bundles)


def test_commit_wave_leaves_incomplete_bundle_in_staging_and_commits_the_rest(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    store = DeltaStore(tmp_path / "root", staging_timeout=0.2)
    bundles, _ = _wave(store, make_record, make_metric, size=3)
    (bundles[-1] / SENTINEL).unlink()

    report = store.commit_wave(bundles)

    assert report.committed == 2
    assert report.left_out == (bundles[-1],)
    assert bundles[-1].is_dir()
    assert _count(store, EXECUTIONS) == 2
    assert store.recover() == 0  # still incomplete: young, so left for its writer


@pytest.mark.parametrize("when", ["after-first-table", "while-claiming"])
def test_kill_9_mid_wave_then_recover_commits_every_bundle_once(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory, when: str
) -> None:
    store = DeltaStore(tmp_path / "root")
    bundles, outputs = _wave(store, make_record, make_metric, size=5)
    pickled = tmp_path / "wave.pickle"
    pickled.write_bytes(pickle.dumps((bundles, outputs)))

    child = subprocess.run(
        [sys.executable, "-c", _COMMIT_THEN_DIE, str(store.layout.root), str(pickled), when],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert _count(store, EXECUTIONS) == 0
    if when == "after-first-table":
        assert _count(store, METRICS) == 6  # the first table of the wave, written once

    recovered = DeltaStore(store.layout.root)
    assert recovered.recover() == 5
    assert {spec.name: _count(recovered, spec) for spec in WAVE_TABLES} == {
        METRICS.name: 6,
        ARTIFACT_INDEX.name: 6,
        EXECUTION_EDGES.name: 10,
        # A wave interrupted before it was sealed loses its claim; its outputs are rewritten by
        # the orchestrator's retry of the wave, below.
        STEP_OUTPUTS.name: 6 if when == "after-first-table" else 0,
        EXECUTIONS.name: 5,
    }
    assert recovered.recover() == 0
    assert recovered.commit_wave(bundles, step_outputs=outputs).committed == 0
    assert _count(recovered, EXECUTIONS) == 5
    assert _count(recovered, STEP_OUTPUTS) == 6
    assert not (recovered.layout.staging / ".waves").exists() or not any(
        (recovered.layout.staging / ".waves").iterdir()
    )
