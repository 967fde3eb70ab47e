from __future__ import annotations

import pickle
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

from stemma.core.records import StepOutcome, StepStarted
from stemma.storage import ARTIFACT_INDEX, EXECUTIONS, METRICS, STEPS, DeltaStore, TableSpec

StartedFactory = Callable[..., StepStarted]
OutcomeFactory = Callable[..., StepOutcome]

_RECORD_WHEN_TOLD = """
import pickle, sys, time
from pathlib import Path
from stemma.storage import DeltaStore

root, outcomes_file, go = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
outcomes = pickle.loads(outcomes_file.read_bytes())
store = DeltaStore(root)
deadline = time.monotonic() + 60
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit("never told to start")
    time.sleep(0.01)
for outcome in outcomes:
    store.record_started(outcome.started)
    store.record_outcome(outcome)
"""


def _table(store: DeltaStore, spec: TableSpec) -> pl.DataFrame:
    return pl.read_delta(str(spec.path(store.layout.delta)))


def _batch(
    make_started: StartedFactory, make_outcome: OutcomeFactory, prefix: str, count: int
) -> list[StepOutcome]:
    # Every outcome shares one metric value, so the writers race on the same artifact id.
    return [
        make_outcome(make_started(f"{prefix}_{i}"), value={"shared": True}) for i in range(count)
    ]


def _assert_all_recorded_once(store: DeltaStore, outcomes: list[StepOutcome]) -> None:
    executions = _table(store, EXECUTIONS)
    assert sorted(executions.get_column("execution_run_id").to_list()) == sorted(
        outcome.execution_run_id for outcome in outcomes
    )
    assert _table(store, STEPS).height == 2 * len(outcomes)
    index = _table(store, ARTIFACT_INDEX)
    assert index.get_column("artifact_id").is_unique().all()
    assert index.height == len(outcomes) + 1
    assert _table(store, METRICS).height == 1
    fingerprints = [outcome.started.step.fingerprint for outcome in outcomes]
    assert set(store.completed(fingerprints)) == set(fingerprints)


def test_record_outcome_two_processes_lose_nothing_duplicate_nothing(
    tmp_path: Path, make_started: StartedFactory, make_outcome: OutcomeFactory
) -> None:
    root = tmp_path / "root"
    go = tmp_path / "go"
    batches = [_batch(make_started, make_outcome, prefix, 6) for prefix in ("left", "right")]
    children: list[subprocess.Popen[bytes]] = []
    for number, batch in enumerate(batches):
        outcomes_file = tmp_path / f"outcomes-{number}.pickle"
        outcomes_file.write_bytes(pickle.dumps(batch))
        children.append(
            subprocess.Popen(
                [sys.executable, "-c", _RECORD_WHEN_TOLD, str(root), str(outcomes_file), str(go)],
                stderr=subprocess.PIPE,
            )
        )
    go.touch()
    for child in children:
        _, stderr = child.communicate(timeout=240)
        assert child.returncode == 0, stderr.decode()

    _assert_all_recorded_once(DeltaStore(root), [*batches[0], *batches[1]])


def test_record_outcome_many_threads_one_store_lose_nothing(
    store: DeltaStore, make_started: StartedFactory, make_outcome: OutcomeFactory
) -> None:
    outcomes = _batch(make_started, make_outcome, "thread", 8)

    def record(outcome: StepOutcome) -> None:
        store.record_started(outcome.started)
        store.record_outcome(outcome)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(record, outcomes))

    _assert_all_recorded_once(store, outcomes)


def test_commit_staged_same_bundle_from_threads_commits_once(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    bundle = store.stage_outcome(make_outcome())

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(store.commit_staged, [bundle] * 4))

    assert sorted(results) == [False, False, False, True]
    assert _table(store, EXECUTIONS).height == 1
    assert _table(store, STEPS).height == 1
