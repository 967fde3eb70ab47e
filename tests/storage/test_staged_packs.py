"""Finding a dead worker's staged pack by its units, in both stores (``staged_pack``)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.sqlite import SqliteStore
from stemma.core.store.staging.pack_reading import ANY_STEP_RUN, StagedPackReader
from stemma.storage import DeltaStore
from tests.storage.conftest import metric, record

Store = DeltaStore | SqliteStore


@pytest.fixture(params=["delta", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    root = tmp_path / "root"
    return DeltaStore(root) if request.param == "delta" else SqliteStore(root, staging_timeout=0)


def _key(unit: ExecutionRecord) -> tuple[str, str]:
    return unit.step_run_id, unit.execution_spec_id


def test_staged_pack_finds_a_complete_bundle_by_its_units_and_nothing_else(store: Store) -> None:
    assert isinstance(store, StagedPackReader)
    made = record([metric(1)], inputs={"in": ("a1", "a2")}, key="k1")
    failed = record(success=False, key="k2")
    bundle = store.stage_executions([made, failed])
    other_run = store.stage_execution(record([metric(2)], step_run_id="run-2", key="k1"))
    torn = store.stage_execution(record([metric(3)], key="k3"))
    for sentinel in ("executions.parquet", "sentinel.json"):  # its writer died before this
        (torn / sentinel).unlink(missing_ok=True)
    other_step = store.stage_execution(record([metric(4)], key="k4", step_number=2))

    found = store.staged_pack(1, "score", [_key(made), _key(failed), ("run-1", "k3")])

    assert set(found) == {("run-1", "k1"), ("run-1", "k2")}
    assert {path for path, _ in found.values()} == {bundle}
    got = found["run-1", "k1"][1]
    assert got.success
    assert got.execution_run_id == made.execution_run_id
    assert got.outputs == {"out": (metric(1).artifact_id,)}
    assert got.inputs == {"in": ("a1", "a2")}
    assert not found["run-1", "k2"][1].success
    assert found["run-1", "k2"][1].error == "Traceback: boom"
    assert store.staged_pack(1, "score", [("run-2", "k1")])["run-2", "k1"][0] == other_run
    assert store.staged_pack(1, "score", [("run-1", "k4")]) == {}  # staged under step 2
    assert store.staged_pack(2, "score", [("run-1", "k4")])["run-1", "k4"][0] == other_step


def test_staged_pack_finds_nothing_once_the_bundle_is_committed(store: Store) -> None:
    unit = record([metric(5)], key="k5")
    bundle = store.stage_executions([unit])
    assert set(store.staged_pack(1, "score", [_key(unit)])) == {_key(unit)}
    assert store.commit_wave([bundle]).committed == 1
    assert store.staged_pack(1, "score", [_key(unit)]) == {}


def test_staged_pack_prefers_a_units_successful_bundle_then_its_newest(store: Store) -> None:
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    store.stage_execution(record([metric(6)], key="k6", ended=t0))
    newer = store.stage_execution(record([metric(6)], key="k6", ended=t0 + dt.timedelta(1)))
    store.stage_execution(record(key="k6", success=False, ended=t0 + dt.timedelta(2)))
    ((bundle, found),) = store.staged_pack(1, "score", [("run-1", "k6")]).values()
    assert (bundle, found.success) == (newer, True)


def test_staged_pack_by_key_alone_finds_a_unit_whichever_run_staged_it(store: Store) -> None:
    # (what an adopted element staged: under the dead run's step run, unknown to the rerun)
    dead_run = store.stage_execution(record([metric(7)], step_run_id="run-dead", key="k7"))
    store.stage_execution(record([metric(8)], step_run_id="run-dead", key="k8"))

    found = store.staged_pack(1, "score", [(ANY_STEP_RUN, "k7"), ("run-1", "k8")])

    assert set(found) == {(ANY_STEP_RUN, "k7")}  # filed under the key asked for
    bundle, got = found[ANY_STEP_RUN, "k7"]
    assert (bundle, got.step_run_id) == (dead_run, "run-dead")
    assert got.outputs == {"out": (metric(7).artifact_id,)}
