"""A scheduler's worker log noted beside a staged bundle lands in ``executions.worker_log``."""

from __future__ import annotations

import dataclasses
import pickle
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl

from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.storage import EXECUTIONS, DeltaStore, executions

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]


def _logs(store: DeltaStore) -> dict[str, str | None]:
    rows = executions(store.layout.root).select("execution_run_id", "worker_log")
    return dict(zip(rows["execution_run_id"], rows["worker_log"], strict=True))


def test_a_noted_log_is_committed_with_the_wave_for_every_unit_of_the_pack(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    pack = [make_record([make_metric(i)]) for i in range(3)]
    bundle = store.stage_executions(pack)
    ids = [r.execution_run_id for r in pack]
    store.note_worker_log(bundle, ids[:2], "==> 17_0_log.out <==\nhello from the element")
    store.note_worker_log(bundle, ids[2:], "==> 17_1_log.out <==\nanother element")

    assert store.commit_wave([bundle]).committed == 1

    logs = _logs(store)
    assert logs[ids[0]] == logs[ids[1]] == "==> 17_0_log.out <==\nhello from the element"
    assert logs[ids[2]] == "==> 17_1_log.out <==\nanother element"


def test_a_log_the_worker_recorded_itself_is_not_overwritten(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    own = dataclasses.replace(make_record([make_metric(1)]), worker_log="the worker's own")
    bundle = store.stage_executions([own])
    store.note_worker_log(bundle, [own.execution_run_id], "the scheduler's")
    store.commit_wave([bundle])
    assert _logs(store) == {own.execution_run_id: "the worker's own"}


def test_a_bundle_recovered_after_a_crash_keeps_its_noted_log(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    record = make_record([make_metric(2)])
    bundle = store.stage_executions([record])
    store.note_worker_log(bundle, [record.execution_run_id], "noted before the crash")
    # The orchestrator died before committing: the next start's recovery commits the bundle.
    assert DeltaStore(store.layout.root).recover() == 1
    assert _logs(store) == {record.execution_run_id: "noted before the crash"}


_COMMIT_THEN_DIE = """
import os, pickle, signal, sys
from pathlib import Path
import stemma.storage.commit as commit
from stemma.storage import DeltaStore

original = commit.append_rows
def dying(*args, **kwargs):  # the wave is sealed and its first table written: die there
    wrote = original(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
    return wrote
commit.append_rows = dying
DeltaStore(Path(sys.argv[1])).commit_wave(pickle.loads(Path(sys.argv[2]).read_bytes()))
"""


def test_a_sealed_wave_recovered_after_a_crash_keeps_its_noted_logs(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory, tmp_path: Path
) -> None:
    packs = [[make_record([make_metric(10 * p + i)]) for i in range(2)] for p in range(2)]
    bundles = [store.stage_executions(pack) for pack in packs]
    for number, (bundle, pack) in enumerate(zip(bundles, packs, strict=True)):
        store.note_worker_log(bundle, [r.execution_run_id for r in pack], f"element {number}")
    wave = tmp_path / "wave.pickle"
    wave.write_bytes(pickle.dumps(bundles))
    child = subprocess.run(
        [sys.executable, "-c", _COMMIT_THEN_DIE, str(store.layout.root), str(wave)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert not EXECUTIONS.path(store.layout.delta).exists()  # died before the executions

    assert DeltaStore(store.layout.root).recover() == 2  # the sealed wave, committed again
    expected = {r.execution_run_id: f"element {n}" for n, pack in enumerate(packs) for r in pack}
    assert _logs(store) == expected


def test_an_unreadable_note_never_stops_a_commit(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    record = make_record([make_metric(3)])
    bundle = store.stage_executions([record])
    (Path(bundle) / "worker_log.json").write_text("{not json", encoding="utf-8")
    assert store.commit_wave([bundle]).committed == 1
    assert _logs(store) == {record.execution_run_id: None}
    assert executions(store.layout.root).filter(pl.col("success")).height == 1
