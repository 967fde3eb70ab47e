from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

from stemma.core.records import StepOutcome, StepStarted
from stemma.storage import EXECUTIONS, OUTCOME_TABLES, DeltaStore, TableSpec, executions

OutcomeFactory = Callable[..., StepOutcome]
StartedFactory = Callable[..., StepStarted]

_STAGE_THEN_DIE = """
import os, pickle, signal, sys
from pathlib import Path
from stemma.storage import DeltaStore

outcome = pickle.loads(Path(sys.argv[2]).read_bytes())
DeltaStore(Path(sys.argv[1])).stage_outcome(outcome)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _count(store: DeltaStore, spec: TableSpec) -> int:
    path = spec.path(store.layout.delta)
    return pl.read_delta(str(path)).height if path.exists() else 0


def test_recover_after_kill_9_commits_staged_outcome_once(
    tmp_path: Path, make_outcome: OutcomeFactory
) -> None:
    root = tmp_path / "root"
    outcome = make_outcome(inputs={"data": ("a" * 32,)})
    pickled = tmp_path / "outcome.pickle"
    pickled.write_bytes(pickle.dumps(outcome))

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
    counts = {spec.name: _count(store, spec) for spec in OUTCOME_TABLES}
    assert counts[EXECUTIONS.name] == 1
    assert all(count >= 1 for count in counts.values()), counts
    assert fingerprint_completed(store, outcome)

    assert DeltaStore(root).recover() == 0
    assert {spec.name: _count(store, spec) for spec in OUTCOME_TABLES} == counts


def fingerprint_completed(store: DeltaStore, outcome: StepOutcome) -> bool:
    fingerprint = outcome.started.step.fingerprint
    return fingerprint in store.completed([fingerprint])


def test_recover_incomplete_bundles_deletes_stale_keeps_young(
    store: DeltaStore, make_outcome: OutcomeFactory
) -> None:
    stale = store.stage_outcome(make_outcome())
    young = store.stage_outcome(make_outcome())
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
    store: DeltaStore, make_started: StartedFactory, make_outcome: OutcomeFactory
) -> None:
    store.stage_outcome(make_outcome(make_started("mine")))
    store.stage_outcome(make_outcome(make_started("other")))
    assert store.recover("mine") == 1
    assert set(executions(store.layout)["step_name"].to_list()) == {"mine"}
    assert store.recover() == 1
    assert set(executions(store.layout)["step_name"].to_list()) == {"mine", "other"}
