"""On a shared filesystem the Delta store reads staged files through before trusting them.

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

from stemma.core.execution_records import ExecutionRecord, StepOutputs
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.storage import METRICS, DeltaStore
from stemma.storage.sentinel import SENTINEL
from stemma.storage.staging_checks import ProblemKind

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]
Later = Callable[[float, Callable[[], object]], None]


def _hide_content(file: Path, aside: Path) -> None:
    """Keep ``file``'s content at ``aside`` and leave it there empty, as a stale client sees it."""
    os.replace(file, aside)
    file.write_bytes(b"")


def _stage(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory, size: int
) -> tuple[list[ExecutionRecord], list[Path], StepOutputs]:
    records = [make_record([make_metric(i)]) for i in range(size)]
    ids = tuple(sorted(a.artifact_id for r in records for a in r.artifacts))
    bundles = [store.stage_execution(r) for r in records]
    return records, bundles, StepOutputs(step_run_id="run-1", outputs={"out": ids})


def _committed(store: DeltaStore, records: list[ExecutionRecord]) -> tuple[int, int]:
    """How many of ``records`` have their execution, and their artifact, in the store."""
    keys = [r.execution_spec_id for r in records]
    ids = [a.artifact_id for r in records for a in r.artifacts]
    return len(store.executions_by_key(keys)), len(store.load_artifacts(ids))


@pytest.fixture
def later() -> Iterator[Later]:
    timers: list[threading.Timer] = []

    def schedule(seconds: float, action: Callable[[], object]) -> None:
        timer = threading.Timer(seconds, action)
        timers.append(timer)
        timer.start()

    yield schedule
    for timer in timers:
        timer.join()


@pytest.mark.parametrize("late", [METRICS.staged_name, SENTINEL])
def test_shared_commit_waits_for_a_file_whose_content_shows_late_and_commits_it(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    later: Later,
    late: str,
) -> None:
    store = DeltaStore(tmp_path / "root", staging_timeout=20, shared_filesystem=True)
    records, bundles, outputs = _stage(store, make_record, make_metric, 3)
    aside = tmp_path / "content"
    _hide_content(bundles[1] / late, aside)
    later(0.5, lambda: os.replace(aside, bundles[1] / late))

    started = time.monotonic()
    report = store.commit_wave(bundles, step_outputs=outputs)

    assert (report.committed, report.problems) == (3, ())
    assert time.monotonic() - started >= 0.4  # it waited for the content
    assert _committed(store, records) == (3, 3)
    assert not (store.layout.staging / ".quarantine").exists()


@pytest.mark.parametrize("late", [METRICS.staged_name, SENTINEL])
def test_unshared_commit_trusts_the_listing_and_quarantines_an_empty_file(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory, late: str
) -> None:
    store = DeltaStore(tmp_path / "root", staging_timeout=20)
    records, bundles, outputs = _stage(store, make_record, make_metric, 2)
    _hide_content(bundles[1] / late, tmp_path / "content")

    started = time.monotonic()
    report = store.commit_wave(bundles, step_outputs=outputs)

    assert time.monotonic() - started < 5  # a local disk: no waiting
    (problem,) = report.problems
    assert (problem.kind, problem.files) == (ProblemKind.CORRUPT, (late,))
    assert problem.moved_to is not None
    assert problem.moved_to.is_dir()
    assert _committed(store, records) == (1, 1)


def test_shared_commit_of_a_file_never_readable_reports_it_missing_and_recover_commits_it_later(
    tmp_path: Path, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    store = DeltaStore(tmp_path / "root", staging_timeout=0.5, shared_filesystem=True)
    records, bundles, outputs = _stage(store, make_record, make_metric, 2)
    aside = tmp_path / "content"
    _hide_content(bundles[1] / METRICS.staged_name, aside)

    started = time.monotonic()
    report = store.commit_wave(bundles, step_outputs=outputs)

    assert 0.4 <= time.monotonic() - started < 10  # waited, but only the staging timeout
    assert report.committed == 1
    (problem,) = report.problems
    assert (problem.kind, problem.bundle, problem.files) == (
        ProblemKind.MISSING,
        bundles[1],
        (METRICS.staged_name,),
    )
    assert METRICS.staged_name in problem.error
    assert bundles[1].is_dir()  # left in staging, not quarantined
    note = store.layout.logs / "failures" / "step_1_score" / f"{bundles[1].name}.staging.log"
    assert METRICS.staged_name in note.read_text()
    assert _committed(store, records) == (1, 1)

    os.replace(aside, bundles[1] / METRICS.staged_name)  # it shows up at last
    assert store.recover() == 1
    assert store.recover() == 0
    assert _committed(store, records) == (2, 2)


@pytest.mark.parametrize(("shared", "kept"), [(True, True), (False, False)])
def test_recover_leaves_a_sentinel_not_readable_yet_only_on_a_shared_root(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    shared: bool,
    kept: bool,
) -> None:
    store = DeltaStore(tmp_path / "root", staging_timeout=0, shared_filesystem=shared)
    records, bundles, _ = _stage(store, make_record, make_metric, 1)
    aside = tmp_path / "content"
    _hide_content(bundles[0] / SENTINEL, aside)

    assert store.recover() == 0

    assert bundles[0].is_dir() is kept  # else quarantined as corrupt, as on a local disk
    if kept:
        os.replace(aside, bundles[0] / SENTINEL)
        assert store.recover() == 1
        assert _committed(store, records) == (1, 1)
