"""A wave too large to hold whole is committed in chunks: the same rows, once, crash or not."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import stemma.storage.chunked_commit as chunked_commit
import stemma.storage.staging as staging
import stemma.storage.wave_chunks as wave_chunks
import stemma.storage.waves as waves
from stemma.core.execution_records import ExecutionRecord, StepOutputs
from stemma.storage import (
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    METRICS,
    STEP_OUTPUTS,
    DeltaStore,
    TableSpec,
)
from stemma.storage.staging_checks import ProblemKind
from stemma.storage.wave_chunks import CHUNK_ROWS_ENV, Piece, commit_chunk_rows

from .conftest import MetricFactory, RecordFactory, delta_transactions, read_delta

TINY = "1"
"""Chunks of one row: every staged file (or row group) is a chunk of its own."""
WAVE_TABLES = (METRICS, ARTIFACT_INDEX, EXECUTION_EDGES, STEP_OUTPUTS, EXECUTIONS)
SORT_KEYS = {
    METRICS: ["artifact_id"],
    ARTIFACT_INDEX: ["artifact_id"],
    EXECUTION_EDGES: ["execution_run_id", "direction", "role", "artifact_id"],
    STEP_OUTPUTS: ["role", "artifact_id"],
    EXECUTIONS: ["execution_run_id"],
}

_COMMIT_THEN_DIE = """
import os, pickle, signal, sys
from pathlib import Path
import stemma.storage.commit as commit
from stemma.storage import DeltaStore

original = commit.append_rows
appends = []
def dying(*args, **kwargs):
    wrote = original(*args, **kwargs)
    appends.append(wrote)
    if len(appends) == int(sys.argv[3]):
        os.kill(os.getpid(), signal.SIGKILL)
    return wrote
commit.append_rows = dying
bundles, outputs = pickle.loads(Path(sys.argv[2]).read_bytes())
DeltaStore(Path(sys.argv[1])).commit_wave(bundles, step_outputs=outputs)
"""


def _wave(
    make_record: RecordFactory, make_metric: MetricFactory, size: int = 7
) -> tuple[list[ExecutionRecord], StepOutputs]:
    """``size`` records of two metrics each; metric 0 is in every record (a duplicate)."""
    records = [make_record([make_metric(0), make_metric(i + 1)]) for i in range(size)]
    ids = sorted({a.artifact_id for r in records for a in r.artifacts})
    return records, StepOutputs(step_run_id="run-1", outputs={"out": tuple(ids), "none": ()})


def _rows(store: DeltaStore, spec: TableSpec) -> pl.DataFrame:
    path = spec.path(store.layout.delta)
    if not path.exists():
        return spec.empty()
    return read_delta(path).sort(SORT_KEYS[spec], nulls_last=True)


def _same_rows(store: DeltaStore, whole: DeltaStore) -> None:
    for spec in WAVE_TABLES:
        assert (
            _rows(store, spec)
            .drop("worker_log", strict=False)
            .equals(_rows(whole, spec).drop("worker_log", strict=False))
        ), spec.name


def _whole(tmp_path: Path, records: list[ExecutionRecord], outputs: StepOutputs) -> DeltaStore:
    """The same wave committed whole, for comparison."""
    store = DeltaStore(tmp_path / "whole")
    bundles = [store.stage_execution(r) for r in records]
    assert store.commit_wave(bundles, step_outputs=outputs).committed == len(records)
    return store


def test_a_large_wave_commits_in_chunks_the_same_rows_as_a_whole_commit(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records, outputs = _wave(make_record, make_metric)
    whole = _whole(tmp_path, records, outputs)
    monkeypatch.setenv(CHUNK_ROWS_ENV, TINY)
    chunked = DeltaStore(tmp_path / "chunked")
    bundles = [chunked.stage_execution(r) for r in records]

    assert chunked.commit_wave(bundles, step_outputs=outputs).committed == 7

    _same_rows(chunked, whole)
    # Every file is larger than the budget: one chunk each (each metric file holds an artifact
    # that no earlier chunk held, so each chunk appends).
    assert len(delta_transactions(chunked, METRICS)) == 7
    assert len(delta_transactions(chunked, EXECUTIONS)) == 7
    assert len(delta_transactions(whole, EXECUTIONS)) == 1
    assert not any(b.exists() for b in bundles)
    assert chunked.recover() == 0
    assert chunked.commit_wave(bundles, step_outputs=outputs).committed == 0  # once, not twice
    assert _rows(chunked, STEP_OUTPUTS).height == _rows(whole, STEP_OUTPUTS).height


def test_a_staged_file_larger_than_a_chunk_is_committed_a_few_row_groups_at_a_time(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = [make_record([make_metric(i) for i in range(10)])]  # one unit, ten artifacts
    ids = tuple(sorted(a.artifact_id for a in records[0].artifacts))
    outputs = StepOutputs(step_run_id="run-1", outputs={"out": ids})
    whole = _whole(tmp_path, records, outputs)
    monkeypatch.setattr(staging, "STAGED_ROW_GROUP", 4)  # row groups of 4, 4 and 2 rows
    monkeypatch.setenv(CHUNK_ROWS_ENV, TINY)
    chunked = DeltaStore(tmp_path / "chunked")
    bundles = [chunked.stage_execution(r) for r in records]

    assert chunked.commit_wave(bundles, step_outputs=outputs).committed == 1

    for spec in WAVE_TABLES:
        assert _rows(chunked, spec).equals(_rows(whole, spec)), spec.name
    assert len(delta_transactions(chunked, METRICS)) == 3  # one chunk per row group
    assert len(delta_transactions(chunked, EXECUTIONS)) == 1


@pytest.mark.parametrize("appends", [1, 4, 9])
def test_kill_9_between_chunks_then_recover_commits_every_row_once(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory, appends: int
) -> None:
    records, outputs = _wave(make_record, make_metric)
    whole = _whole(tmp_path, records, outputs)
    store = DeltaStore(tmp_path / "root")
    bundles = [store.stage_execution(r) for r in records]
    pickled = tmp_path / "wave.pickle"
    pickled.write_bytes(pickle.dumps((bundles, outputs)))

    child = subprocess.run(
        [
            sys.executable,
            "-c",
            _COMMIT_THEN_DIE,
            str(store.layout.root),
            str(pickled),
            str(appends),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, CHUNK_ROWS_ENV: TINY},
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert _rows(store, EXECUTIONS).height < 7

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CHUNK_ROWS_ENV, TINY)
        assert DeltaStore(store.layout.root).recover() == 7
    _same_rows(store, whole)
    assert store.recover() == 0


def test_a_garbled_file_in_a_large_wave_is_quarantined_before_any_row_is_appended(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CHUNK_ROWS_ENV, TINY)
    store = DeltaStore(tmp_path / "root")
    records = [make_record([make_metric(i)]) for i in range(6)]
    bundles = [store.stage_execution(r) for r in records]
    kept = tuple(sorted(a.artifact_id for r in records[:5] for a in r.artifacts))
    lost = records[5].artifacts[0].artifact_id
    outputs = StepOutputs(step_run_id="run-1", outputs={"out": kept, "lost": (lost,)})
    bad = bundles[5]
    data = (bad / METRICS.staged_name).read_bytes()
    (bad / METRICS.staged_name).write_bytes(data[: len(data) // 2])

    report = store.commit_wave(bundles, step_outputs=outputs)

    assert report.committed == 5
    (problem,) = report.problems
    assert problem.kind is ProblemKind.CORRUPT
    assert problem.bundle == bad
    assert _rows(store, EXECUTIONS).height == 5
    assert _rows(store, METRICS).height == 5
    offered = _rows(store, STEP_OUTPUTS)
    # The role whose only artifact was lost keeps one row with a null id, once.
    assert offered.filter(pl.col("role") == "lost").get_column("artifact_id").to_list() == [None]
    assert sorted(offered.filter(pl.col("role") == "out").get_column("artifact_id")) == list(kept)
    assert store.recover() == 0


def test_commit_chunk_rows_reads_the_environment_and_names_a_bad_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CHUNK_ROWS_ENV, raising=False)
    assert commit_chunk_rows() == 100_000
    monkeypatch.setenv(CHUNK_ROWS_ENV, "1000")
    assert commit_chunk_rows() == 1000
    for bad in ("0", "-5", "lots", "1.5"):
        monkeypatch.setenv(CHUNK_ROWS_ENV, bad)
        with pytest.raises(ValueError, match=rf"{CHUNK_ROWS_ENV}='{bad}'.*positive"):
            commit_chunk_rows()


def test_a_bad_chunk_size_stops_the_store_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHUNK_ROWS_ENV, "many")
    with pytest.raises(ValueError, match=CHUNK_ROWS_ENV):
        DeltaStore(tmp_path / "root")
    assert not (tmp_path / "root").exists()


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[Piece]:
    """Every piece read from its staged files, in order."""
    read: list[Piece] = []
    original = wave_chunks.read_piece

    def counting(spec: TableSpec, piece: Piece) -> pl.DataFrame:
        read.append(piece)
        return original(spec, piece)

    monkeypatch.setattr(chunked_commit, "read_piece", counting)
    return read


def _chunked_with_spill(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[DeltaStore, list[Path], StepOutputs, DeltaStore]:
    """A wave staged for chunks of 4 rows, spilled from pieces of 2 files; and it whole."""
    records, outputs = _wave(make_record, make_metric)
    whole = _whole(tmp_path, records, outputs)
    monkeypatch.setenv(CHUNK_ROWS_ENV, "4")
    monkeypatch.setattr(chunked_commit, "SPILL_FILES", 2)
    store = DeltaStore(tmp_path / "chunked")
    return store, [store.stage_execution(r) for r in records], outputs, whole


def test_a_piece_of_many_files_is_appended_from_its_spill_not_read_again_from_staging(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, bundles, outputs, whole = _chunked_with_spill(
        tmp_path, make_record, make_metric, monkeypatch
    )
    read = _counting_reads(monkeypatch)

    assert store.commit_wave(bundles, step_outputs=outputs).committed == 7

    _same_rows(store, whole)
    # Executions: 7 one-row files in pieces of 4 and 3 files, each read once (then spilled).
    assert [len(p.files) for p in read if p.files[0].name == EXECUTIONS.staged_name] == [4, 3]
    assert len(delta_transactions(store, EXECUTIONS)) == 2
    spilled = [piece for piece in read if len(piece.files) >= 2]
    assert len(spilled) == len(set(spilled))  # no piece of many files read twice
    assert not list((store.layout.staging / ".waves").glob("*"))  # the spill went with the wave


@pytest.mark.parametrize("failure", ["cannot-be-written", "gone-before-read-back"])
def test_a_spill_that_fails_only_costs_a_second_read_of_the_staged_files(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
    failure: str,
) -> None:
    store, bundles, outputs, whole = _chunked_with_spill(
        tmp_path, make_record, make_metric, monkeypatch
    )
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    original = chunked_commit.read_through

    def failing(plan: Mapping[TableSpec, Sequence[Piece]], spill: Path) -> dict[Any, Path]:
        if failure == "cannot-be-written":
            return original(plan, blocker / "chunks")
        spilled = original(plan, spill)
        assert spilled
        shutil.rmtree(spill)
        return spilled

    monkeypatch.setattr(waves, "read_through", failing)
    read = _counting_reads(monkeypatch)

    assert store.commit_wave(bundles, step_outputs=outputs).committed == 7

    _same_rows(store, whole)
    executions = [p for p in read if p.files[0].name == EXECUTIONS.staged_name]
    assert [len(p.files) for p in executions] == [4, 3, 4, 3]  # read through, then again
