"""A bundle's sentinel records each table's rows, so a wave plans its commit from the sentinels."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import stemma.storage.wave_chunks as wave_chunks
from stemma.core.execution_records import ExecutionRecord, StepOutputs
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.tree import step_dir_of
from stemma.storage import (
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    METRICS,
    DeltaStore,
    StagedBundleError,
    TableSpec,
)
from stemma.storage.bundle_reads import staged_files
from stemma.storage.sentinel import ROWS_KEY, SENTINEL, Listing, read_listing
from stemma.storage.staging import write_durably
from stemma.storage.staging_checks import check_bundle
from stemma.storage.wave_chunks import CHUNK_ROWS_ENV, Piece, chunk_plan

from .conftest import MetricFactory, RecordFactory, delta_transactions, read_delta


def _records(make_record: RecordFactory, make_metric: MetricFactory) -> list[ExecutionRecord]:
    """Five units of one to five metrics each, no metric in two units."""
    return [make_record([make_metric(10 * size + i) for i in range(size)]) for size in range(1, 6)]


def _stage(store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory) -> list[Path]:
    return [store.stage_execution(r) for r in _records(make_record, make_metric)]


def _forget_rows(bundle: Path, recorded: str | None = None) -> None:
    """Rewrite the sentinel as a bundle staged before row counts were recorded (or with
    ``recorded`` as its record)."""
    sentinel = bundle / SENTINEL
    metadata = {
        key: value
        for key, value in pl.read_parquet_metadata(sentinel).items()
        if key.startswith("stemma.") and key != ROWS_KEY
    }
    if recorded is not None:
        metadata[ROWS_KEY] = recorded
    write_durably(pl.read_parquet(sentinel), sentinel, metadata=metadata)


def test_a_staged_bundle_records_each_tables_rows_in_its_sentinel(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundle = store.stage_execution(make_record([make_metric(i) for i in range(3)]))

    listing = read_listing(bundle)

    assert listing.tables == (METRICS, ARTIFACT_INDEX, EXECUTION_EDGES, EXECUTIONS)
    assert listing.rows == {
        spec: pl.read_parquet(bundle / spec.staged_name).height for spec in listing.tables
    }
    assert listing.rows is not None
    assert listing.rows[METRICS] == 3
    assert listing.rows[EXECUTIONS] == 1
    assert check_bundle(bundle) == listing


@pytest.mark.parametrize(
    "recorded",
    [None, "not json", "[1, 2]", '{"orchestration/executions": 1}', '{"x": -1}'],
    ids=["absent", "garbled", "not-an-object", "a-table-missing", "negative"],
)
def test_a_sentinel_without_usable_row_counts_still_lists_its_tables(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory, recorded: str | None
) -> None:
    bundle = store.stage_execution(make_record([make_metric(1)]))
    _forget_rows(bundle, recorded)

    listing = read_listing(bundle)

    assert listing == Listing((METRICS, ARTIFACT_INDEX, EXECUTION_EDGES, EXECUTIONS), None)


@pytest.mark.parametrize("chunk_rows", [None, "1", "4"], ids=["whole", "tiny", "some"])
def test_bundles_staged_before_row_counts_were_recorded_commit_the_same_rows_and_chunks(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
    chunk_rows: str | None,
) -> None:
    if chunk_rows is not None:
        monkeypatch.setenv(CHUNK_ROWS_ENV, chunk_rows)
    records = _records(make_record, make_metric)  # the same units, so the same wave order
    stores = {name: DeltaStore(tmp_path / name) for name in ("recorded", "old", "mixed")}
    for name, store in stores.items():
        bundles = [store.stage_execution(r) for r in records]
        for number, bundle in enumerate(bundles):
            if name == "old" or (name == "mixed" and number % 2):
                _forget_rows(bundle)
        outputs = StepOutputs(step_run_id="run-1", outputs={"out": ()})

        assert store.commit_wave(bundles, step_outputs=outputs).committed == 5, name

    for spec in (METRICS, ARTIFACT_INDEX, EXECUTIONS):
        heights = {name: read_delta(spec.path(s.layout.delta)).height for name, s in stores.items()}
        assert len(set(heights.values())) == 1, (spec.name, heights)
        # The same plan, so the same chunk transactions, whether rows were read or recorded.
        chunks = {name: len(delta_transactions(s, spec)) for name, s in stores.items()}
        assert len(set(chunks.values())) == 1, (spec.name, chunks)


@pytest.mark.parametrize("rows", [1, 2, 3, 5, 9, 15, 100])
def test_chunk_plan_from_recorded_rows_cuts_the_pieces_the_footers_would(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory, rows: int
) -> None:
    staged = staged_files(_stage(store, make_record, make_metric))

    recorded = chunk_plan(staged.files, rows, staged.rows)
    counted = chunk_plan(staged.files, rows)

    assert len(staged.rows) == sum(len(found) for found in staged.files.values())
    assert recorded == counted


def test_chunk_plan_from_recorded_rows_reads_no_footer_and_no_file_size(
    store: DeltaStore,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    staged = staged_files(_stage(store, make_record, make_metric))

    def unread(*_: object) -> int:
        raise AssertionError("a footer or a file size was read")

    for name in ("_footer", "_row_count", "_disk_size"):
        monkeypatch.setattr(wave_chunks, name, unread)

    plan = chunk_plan(staged.files, 5, staged.rows)

    # Metrics files of 1 to 5 rows (in the order of their bundles): cut where the next file
    # would pass 5 rows.
    expected: list[list[Path]] = []
    held = 0
    for file in staged.files[METRICS]:
        rows = staged.rows[file]
        if not expected or held + rows > 5:
            expected.append([])
            held = 0
        expected[-1].append(file)
        held += rows
    assert plan[METRICS] == [Piece(tuple(files)) for files in expected]
    assert len(plan[METRICS]) > 1
    assert plan[EXECUTIONS] == [Piece(tuple(staged.files[EXECUTIONS]))]


def test_a_truncated_file_of_a_bundle_with_recorded_rows_is_still_found_before_any_append(
    tmp_path: Path,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The plan does not open a file no larger than a chunk (its rows are recorded): the
    # read-through finds it.
    monkeypatch.setenv(CHUNK_ROWS_ENV, "2")
    store = DeltaStore(tmp_path / "root")
    bundles = _stage(store, make_record, make_metric)
    bad = bundles[0]  # one artifact
    data = (bad / ARTIFACT_INDEX.staged_name).read_bytes()
    (bad / ARTIFACT_INDEX.staged_name).write_bytes(data[: len(data) // 2])

    report = store.commit_wave(bundles)

    assert report.committed == 4
    assert [p.bundle for p in report.problems] == [bad]
    assert _height(store, EXECUTIONS) == 4


def _height(store: DeltaStore, spec: TableSpec) -> int:
    return read_delta(spec.path(store.layout.delta)).height


@pytest.mark.parametrize(
    "relative",
    ["1_s/ab/ce/abcdef", "ab/cd/abcdef", "s/t/ab/cd/abcdef", "../elsewhere/ab/cd/abcdef"],
)
def test_step_dir_of_refuses_a_path_not_shaped_like_a_staged_bundle(
    tmp_path: Path, relative: str
) -> None:
    layout = RootLayout(tmp_path / "root")

    with pytest.raises(StagedBundleError, match="is not a bundle staged under"):
        step_dir_of(layout, layout.staging / relative, reserved_ok=True)
    assert step_dir_of(layout, layout.staging / "1_s/ab/cd/abcdef", reserved_ok=True) == "1_s"


def test_the_recorded_rows_are_json_naming_each_table(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundle = store.stage_execution(make_record([make_metric(1), make_metric(2)]))

    recorded = json.loads(pl.read_parquet_metadata(bundle / SENTINEL)[ROWS_KEY])

    assert recorded["artifacts/metrics"] == 2
    assert recorded["orchestration/executions"] == 1
