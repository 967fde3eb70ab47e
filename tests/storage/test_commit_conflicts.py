"""Delta commit conflicts (a writer that does not hold our table lock): retried, landing once."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from deltalake import write_deltalake
from deltalake.exceptions import CommitFailedError

import stemma.storage.tables as tables
from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.storage import (
    EXECUTIONS,
    METRICS,
    CommitConflictError,
    DeltaStore,
    TableSpec,
)

from .conftest import read_delta

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]


def _count(store: DeltaStore, spec: TableSpec) -> int:
    path = spec.path(store.layout.delta)
    return read_delta(path).height if path.exists() else 0


def _stage(store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory) -> list[Path]:
    """Three bundles to commit, their tables already made (by a first commit of a fourth: a
    table's first rows make it, in a commit no other writer can race as an append)."""
    assert store.commit_wave([store.stage_execution(make_record([make_metric(99)]))]).committed
    return [store.stage_execution(make_record([make_metric(i)])) for i in range(3)]


def _sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(tables, "time", SimpleNamespace(sleep=slept.append))
    return slept


def test_conflicting_commit_is_retried_with_jittered_backoff_and_its_rows_land_once(
    store: DeltaStore,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundles = _stage(store, make_record, make_metric)
    slept = _sleeps(monkeypatch)
    conflicts = 0

    def racing_writer(table: Any, data: Any, **kwargs: Any) -> None:
        nonlocal conflicts
        if "metrics" in str(table.table_uri) and conflicts < 2:
            conflicts += 1
            if conflicts == 1:  # someone else appended the same artifacts first
                write_deltalake(table, data, mode="append")
            raise CommitFailedError("concurrent transaction")
        write_deltalake(table, data, **kwargs)

    monkeypatch.setattr(tables, "write_deltalake", racing_writer)

    assert store.commit_wave(bundles).committed == 3

    assert conflicts == 1  # the retry re-read the table: nothing left to write, no conflict
    assert _count(store, METRICS) == 1 + 3
    assert _count(store, EXECUTIONS) == 1 + 3
    assert len(slept) == 1
    assert 0.05 <= slept[0] <= 0.1


def test_commit_conflicting_on_every_attempt_raises_and_recover_finishes_it_once(
    store: DeltaStore,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundles = _stage(store, make_record, make_metric)
    slept = _sleeps(monkeypatch)

    def always_conflicting(table: Any, data: Any, **kwargs: Any) -> None:
        if "executions" in str(table.table_uri):
            raise CommitFailedError("concurrent transaction")
        write_deltalake(table, data, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(tables, "write_deltalake", always_conflicting)
        with pytest.raises(CommitConflictError, match="recover"):
            store.commit_wave(bundles)

    assert len(slept) == tables.COMMIT_ATTEMPTS
    assert all(b > a for a, b in itertools.pairwise(slept))  # exponential
    assert _count(store, EXECUTIONS) == 1
    assert store.recover() == 3
    assert _count(store, EXECUTIONS) == 1 + 3
    assert _count(store, METRICS) == 1 + 3
