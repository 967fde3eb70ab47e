"""On a shared filesystem the SQLite store reads staged files through before trusting them.

A listing on NFS can show a staged file whose content is not visible yet on this host. Here
that is a file that is there but empty, whose content is put in place (one atomic rename, as a
worker stages it) while the commit is looking: a store told the root is shared waits for it
and commits it; one that lists the directory takes the empty file at its word.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.store.sqlite import ProblemKind, SqliteStore

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]
RECORDS, SENTINEL = "records.json", "sentinel.json"


def _hide_content(file: Path, aside: Path, keep: float = 0.0) -> None:
    """Keep ``file``'s content at ``aside`` and leave it there empty (or its first ``keep``
    part), as a client with stale attributes sees it."""
    os.replace(file, aside)
    data = aside.read_bytes()
    file.write_bytes(data[: int(len(data) * keep)])


@pytest.fixture
def later() -> Iterator[Callable[[float, Callable[[], object]], None]]:
    timers: list[threading.Timer] = []

    def schedule(seconds: float, action: Callable[[], object]) -> None:
        timer = threading.Timer(seconds, action)
        timers.append(timer)
        timer.start()

    yield schedule
    for timer in timers:
        timer.join()


@pytest.mark.parametrize(
    ("late", "keep"),
    [(RECORDS, 0.0), (RECORDS, 0.5), (SENTINEL, 0.0)],
    ids=["records-empty", "records-short", "sentinel-empty"],
)
def test_shared_commit_waits_for_a_file_whose_content_shows_late_and_commits_it(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    later: Callable[[float, Callable[[], object]], None],
    late: str,
    keep: float,
) -> None:
    store = SqliteStore(tmp_path / "root", staging_timeout=20, shared_filesystem=True)
    record = make_record([make_metric(1)])
    bundle = store.stage_execution(record)
    aside = tmp_path / "content"
    # (short: its sentinel records the records file's size, so a short view is not corrupt yet)
    _hide_content(bundle / late, aside, keep)
    later(0.5, lambda: os.replace(aside, bundle / late))

    started = time.monotonic()
    report = store.commit_wave([bundle])

    assert (report.committed, report.problems) == (1, ())
    assert time.monotonic() - started >= 0.4  # it waited for the content
    assert record.execution_spec_id in store.executions_by_key([record.execution_spec_id])
    assert not (store.layout.staging / ".quarantine").exists()


@pytest.mark.parametrize("late", [RECORDS, SENTINEL])
def test_unshared_commit_trusts_the_listing_and_quarantines_an_empty_file(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory, late: str
) -> None:
    store = SqliteStore(tmp_path / "root", staging_timeout=20)
    bundle = store.stage_execution(make_record([make_metric(1)]))
    _hide_content(bundle / late, tmp_path / "content")

    started = time.monotonic()
    report = store.commit_wave([bundle])

    assert time.monotonic() - started < 5  # a local disk: no waiting
    (problem,) = report.problems
    assert (problem.kind, problem.files) == (ProblemKind.CORRUPT, (late,))
    assert problem.moved_to is not None
    assert problem.moved_to.is_dir()


def test_shared_commit_of_a_file_never_readable_reports_it_missing_and_recover_commits_it_later(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    store = SqliteStore(tmp_path / "root", staging_timeout=0.5, shared_filesystem=True)
    records = [make_record([make_metric(i)]) for i in range(2)]
    bundles = [store.stage_execution(r) for r in records]
    aside = tmp_path / "content"
    _hide_content(bundles[1] / RECORDS, aside)

    started = time.monotonic()
    report = store.commit_wave(bundles)

    assert 0.4 <= time.monotonic() - started < 10  # waited, but only the staging timeout
    assert report.committed == 1
    (problem,) = report.problems
    assert (problem.kind, problem.bundle, problem.files) == (
        ProblemKind.MISSING,
        bundles[1],
        (RECORDS,),
    )
    assert RECORDS in problem.error
    assert bundles[1].is_dir()  # left in staging, not quarantined
    note = store.layout.logs / "failures" / "step_1_score" / f"{bundles[1].name}.staging.log"
    assert RECORDS in note.read_text()

    os.replace(aside, bundles[1] / RECORDS)  # it shows up at last
    assert store.recover() == 1
    assert store.recover() == 0
    keys = [r.execution_spec_id for r in records]
    assert set(store.executions_by_key(keys)) == set(keys)


@pytest.mark.parametrize(("shared", "kept"), [(True, True), (False, False)])
def test_recover_leaves_a_sentinel_not_readable_yet_only_on_a_shared_root(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    shared: bool,
    kept: bool,
) -> None:
    store = SqliteStore(tmp_path / "root", staging_timeout=0, shared_filesystem=shared)
    record = make_record([make_metric(1)])
    bundle = store.stage_execution(record)
    aside = tmp_path / "content"
    _hide_content(bundle / SENTINEL, aside)

    assert store.recover() == 0

    assert bundle.is_dir() is kept  # else quarantined as corrupt, as on a local disk
    if kept:
        os.replace(aside, bundle / SENTINEL)
        assert store.recover() == 1
        assert record.execution_spec_id in store.executions_by_key([record.execution_spec_id])
