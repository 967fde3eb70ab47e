from __future__ import annotations

import pickle
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

from stemma.storage import (
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    METRICS,
    STEPS,
    DeltaStore,
    TableSpec,
    commit_staged,
)

from .conftest import FunctionStep, FunctionStepFactory, commit_function_step, read_delta

_RECORD_WHEN_TOLD = """
import pickle, sys, time
from pathlib import Path
from stemma.storage import DeltaStore

root, steps_file, go = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
steps = pickle.loads(steps_file.read_bytes())
store = DeltaStore(root)
deadline = time.monotonic() + 60
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit("never told to start")
    time.sleep(0.01)
for execution, outputs, events in steps:  # as the engine records a function step
    bundle = store.stage_execution(execution)
    store.commit_wave([bundle], step_outputs=outputs)
    store.record_events(events)
"""


def _table(store: DeltaStore, spec: TableSpec) -> pl.DataFrame:
    return read_delta(spec.path(store.layout.delta))


def _batch(make_step: FunctionStepFactory, prefix: str, count: int) -> list[FunctionStep]:
    # Every step returns the same value, so the writers race on the same artifact id.
    return [make_step(f"{prefix}_{i}", value={"shared": True}) for i in range(count)]


def _assert_all_recorded_once(store: DeltaStore, made: list[FunctionStep]) -> None:
    executions = _table(store, EXECUTIONS)
    assert sorted(executions.get_column("execution_run_id").to_list()) == sorted(
        step.execution_run_id for step in made
    )
    assert _table(store, STEPS).height == 2 * len(made)
    assert _table(store, EXECUTION_EDGES).height == 2 * len(made)
    index = _table(store, ARTIFACT_INDEX)
    assert index.get_column("artifact_id").is_unique().all()
    assert index.height == len(made) + 1
    assert _table(store, METRICS).height == 1
    fingerprints = [step.fingerprint for step in made]
    assert set(store.completed(fingerprints)) == set(fingerprints)


def test_function_steps_from_two_processes_lose_nothing_duplicate_nothing(
    tmp_path: Path, make_step: FunctionStepFactory
) -> None:
    root = tmp_path / "root"
    go = tmp_path / "go"
    batches = [_batch(make_step, prefix, 6) for prefix in ("left", "right")]
    children: list[subprocess.Popen[bytes]] = []
    for number, batch in enumerate(batches):
        steps_file = tmp_path / f"steps-{number}.pickle"
        records = [(s.execution, s.step_outputs, [s.running, s.final]) for s in batch]
        steps_file.write_bytes(pickle.dumps(records))
        children.append(
            subprocess.Popen(
                [sys.executable, "-c", _RECORD_WHEN_TOLD, str(root), str(steps_file), str(go)],
                stderr=subprocess.PIPE,
            )
        )
    go.touch()
    for child in children:
        _, stderr = child.communicate(timeout=240)
        assert child.returncode == 0, stderr.decode()

    _assert_all_recorded_once(DeltaStore(root), [*batches[0], *batches[1]])


def test_function_steps_from_many_threads_one_store_lose_nothing(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    made = _batch(make_step, "thread", 8)

    def commit(step: FunctionStep) -> None:
        commit_function_step(store, step)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(commit, made))

    _assert_all_recorded_once(store, made)


def test_commit_staged_same_bundle_from_threads_commits_once(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    bundle = store.stage_execution(make_step().execution)

    def commit(path: Path) -> bool:
        return commit_staged(store.layout, path)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(commit, [bundle] * 4))

    assert sorted(results) == [False, False, False, True]
    assert _table(store, EXECUTIONS).height == 1
    assert _table(store, EXECUTION_EDGES).height == 2
