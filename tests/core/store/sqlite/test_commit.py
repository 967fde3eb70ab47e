"""Wave commits: idempotent, deduplicated by artifact id, all or nothing."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord, StepOutputs
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.store.sqlite import SqliteStore

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]
PROCESS = Path(__file__).with_name("store_process.py")
TABLES = ("executions", "artifacts", "artifact_edges", "execution_roles", "step_outputs")


def _counts(store: SqliteStore) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(store.database)) as connection:
        return {t: connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def test_commit_wave_of_nothing_commits_nothing(store: SqliteStore) -> None:
    report = store.commit_wave([])
    assert (report.committed, report.problems) == (0, ())
    assert not store.database.exists()


def test_commit_twice_adds_nothing_the_second_time(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundles = [store.stage_execution(make_record([make_metric(i)])) for i in range(3)]
    outputs = StepOutputs(step_run_id="run-1", outputs={"out": (make_metric(0).artifact_id,)})
    assert store.commit_wave(bundles, step_outputs=outputs).committed == 3
    before = _counts(store)

    again = store.commit_wave(bundles, step_outputs=outputs)

    assert (again.committed, again.problems) == (0, ())
    assert _counts(store) == before
    assert before == {
        "executions": 3,
        "artifacts": 3,
        "artifact_edges": 0,
        "execution_roles": 3,
        "step_outputs": 1,
    }
    assert not any(bundle.exists() for bundle in bundles)


def test_a_committed_bundle_staged_again_is_retired_without_new_rows(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    unit = make_record([make_metric(1)])
    store.commit_wave([store.stage_execution(unit)])
    before = _counts(store)

    restaged = store.stage_execution(unit)  # a crash between commit and retire looks like this

    assert store.commit_wave([restaged]).committed == 0
    assert store.recover() == 0
    assert _counts(store) == before
    assert not restaged.exists()


def test_an_artifact_made_twice_in_one_wave_is_one_row(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    shared = make_metric(7)
    bundles = [
        store.stage_execution(make_record([shared, make_metric(1)])),
        store.stage_execution(make_record([shared])),
        store.stage_executions([make_record([shared]), make_record([shared, make_metric(2)])]),
    ]

    assert store.commit_wave(bundles).committed == 3

    assert _counts(store)["artifacts"] == 3
    assert _counts(store)["executions"] == 4


def test_an_artifact_already_stored_is_not_written_again(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    store.commit_wave([store.stage_execution(make_record([make_metric(1)]))])
    store.commit_wave([store.stage_execution(make_record([make_metric(1)], step_number=4))])

    (loaded,) = store.load_artifacts([make_metric(1).artifact_id]).values()

    assert _counts(store)["artifacts"] == 1
    assert loaded.origin_step == 1  # the first writer's row


def test_a_wave_that_dies_inside_its_transaction_changes_nothing(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    first = store.stage_execution(make_record([make_metric(0)]))
    store.commit_wave([first])
    before = _counts(store)
    bundles = [store.stage_execution(make_record([make_metric(i)])) for i in range(1, 4)]

    crashed = subprocess.run(
        [sys.executable, str(PROCESS), "crash-in-commit", str(store.layout.root)]
        + [str(b) for b in bundles],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert crashed.returncode == -9, crashed.stderr
    assert _counts(store) == before
    assert all((bundle / "sentinel.json").is_file() for bundle in bundles)
    assert store.recover() == 3
    assert _counts(store)["executions"] == 4


def test_commits_from_threads_of_one_process_land_once_each(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    bundles = [store.stage_execution(make_record([make_metric(i)])) for i in range(40)]
    waves = [bundles[i : i + 10] for i in range(0, 40, 10)] * 2  # each wave twice

    with ThreadPoolExecutor(4) as pool:
        committed = sum(report.committed for report in pool.map(store.commit_wave, waves))

    assert committed == 40
    assert _counts(store)["executions"] == 40
