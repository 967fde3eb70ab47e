from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stemma.storage import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    FILE_REFS,
    METRICS,
    STEPS,
    DeltaStore,
    TableSpec,
    executions,
    steps,
)

from .conftest import FunctionStepFactory, delta_transactions, read_delta

FUNCTION_STEP_TABLES = (
    METRICS,
    FILE_REFS,
    ARTIFACT_INDEX,
    ARTIFACT_EDGES,
    EXECUTION_EDGES,
    EXECUTIONS,
)
OLD_BUNDLE = Path(__file__).parent / "fixtures" / "outcome_bundle"
"""A function step's bundle as stemma staged it before function steps ran on the engine."""

_STAGE_THEN_DIE = """
import os, pickle, signal, sys
from pathlib import Path
from stemma.storage import DeltaStore

record = pickle.loads(Path(sys.argv[2]).read_bytes())
DeltaStore(Path(sys.argv[1])).stage_execution(record)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _count(store: DeltaStore, spec: TableSpec) -> int:
    path = spec.path(store.layout.delta)
    return read_delta(path).height if path.exists() else 0


def test_recover_after_kill_9_commits_staged_function_step_once(
    tmp_path: Path, make_step: FunctionStepFactory
) -> None:
    root = tmp_path / "root"
    step = make_step(inputs={"data": ("a" * 32,)})
    pickled = tmp_path / "record.pickle"
    pickled.write_bytes(pickle.dumps(step.execution))

    child = subprocess.run(
        [sys.executable, "-c", _STAGE_THEN_DIE, str(root), str(pickled)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr

    store = DeltaStore(root)
    assert not store.layout.delta.exists()
    assert store.recover() == 1
    counts = {spec.name: _count(store, spec) for spec in FUNCTION_STEP_TABLES}
    assert counts[EXECUTIONS.name] == 1
    assert all(count >= 1 for count in counts.values()), counts
    # The execution cache answers it now (its step event is the orchestrator's to write).
    found = store.executions_by_key([step.execution.execution_spec_id])
    assert found[step.execution.execution_spec_id].outputs == step.execution.outputs

    assert DeltaStore(root).recover() == 0
    assert {spec.name: _count(store, spec) for spec in FUNCTION_STEP_TABLES} == counts


@pytest.mark.parametrize("step_name", [None, "train"])
def test_recover_commits_a_function_step_bundle_an_older_stemma_staged_once(
    tmp_path: Path, step_name: str | None
) -> None:
    root = tmp_path / "root"
    shutil.copytree(OLD_BUNDLE / "staging", root / "staging")
    (bundle,) = (root / "staging" / "train").glob("*/*/*")
    expected = json.loads((OLD_BUNDLE / "expected.json").read_text())
    store = DeltaStore(root)

    assert store.recover("other") == 0
    assert store.recover(step_name) == 1

    assert not bundle.exists()
    assert {spec.name: _count(store, spec) for spec in (*FUNCTION_STEP_TABLES, STEPS)} == {
        METRICS.name: 1,
        FILE_REFS.name: 1,
        ARTIFACT_INDEX.name: 2,
        ARTIFACT_EDGES.name: 2,
        EXECUTION_EDGES.name: 3,
        EXECUTIONS.name: 1,
        STEPS.name: 2,  # its running and completed events travelled in the bundle
    }
    for spec in (*FUNCTION_STEP_TABLES, STEPS):
        assert delta_transactions(store, spec) == [f"stemma-exec-{bundle.name}"]
    assert steps(root).sort("timestamp").get_column("status").to_list() == ["running", "completed"]
    record = store.completed([expected["fingerprint"]])[expected["fingerprint"]]
    assert record.output_path == expected["output_path"]
    assert record.output_artifact_id == expected["output_artifact_id"]
    assert record.value == expected["value"]

    assert DeltaStore(root).recover() == 0
    assert _count(store, EXECUTIONS) == 1
    assert _count(store, STEPS) == 2


def test_recover_incomplete_bundles_deletes_stale_keeps_young(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    stale = store.stage_execution(make_step().execution)
    young = store.stage_execution(make_step().execution)
    for bundle in (stale, young):
        (bundle / EXECUTIONS.staged_name).unlink()
    two_hours_ago = time.time() - 7200
    for path in (*stale.iterdir(), stale):
        os.utime(path, (two_hours_ago, two_hours_ago))

    assert store.recover() == 0

    assert not stale.exists()
    assert young.is_dir()
    assert not store.layout.delta.exists()


def test_recover_on_empty_root_returns_zero(store: DeltaStore) -> None:
    assert store.recover() == 0


def test_recover_by_step_name_commits_only_that_steps_bundles(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    store.stage_execution(make_step("mine").execution)
    store.stage_execution(make_step("other").execution)
    assert store.recover("mine") == 1
    assert set(executions(store.layout)["step_name"].to_list()) == {"mine"}
    assert store.recover() == 1
    assert set(executions(store.layout)["step_name"].to_list()) == {"mine", "other"}


@pytest.mark.parametrize("name", ["_private", ".hidden", "a/_b"])
def test_recover_by_step_name_finds_a_step_whose_name_starts_with_an_underscore_or_a_dot(
    store: DeltaStore, make_step: FunctionStepFactory, name: str
) -> None:
    # The Delta store stages `_private` under `{n}__private`, which the name's lookup missed.
    store.stage_execution(make_step(name).execution)
    assert store.recover(name) == 1
    assert executions(store.layout)["step_name"].to_list() == [name]
