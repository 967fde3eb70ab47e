"""``DeltaStore.load_artifacts(..., content=False)``: ids and metadata, the content unread."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path

import polars as pl

from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import ConfigDraft, CustomDraft, DataDraft, FileRefDraft
from stemma.core.operations.specs import register_artifact_type
from stemma.storage import DeltaStore
from stemma.storage.artifact_tables import table_for_type
from stemma.storage.content_files import LARGE_CONTENT_BYTES
from stemma.storage.schemas import ARTIFACT_INDEX, METRICS
from stemma.storage.tables import append_rows, read_table

from .conftest import FunctionStepFactory, commit_function_step

RecordFactory = Callable[..., ExecutionRecord]
T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)

register_artifact_type(
    "structure", "artifacts/structures", {"chains": "list<string>", "resolution": "float64"}
)


def test_load_artifacts_without_content_is_the_full_read_minus_the_content(
    store: DeltaStore, make_record: RecordFactory, tmp_path: Path
) -> None:
    (tmp_path / "model.bin").write_bytes(b"weights")
    made = [
        DataDraft.draft(b"a,b\n1,2\n3,4\n", "table.csv", step_number=1, metadata={"k": 1}),
        ConfigDraft.draft({"model": {"$artifact": "e" * 32}}, "run.json", step_number=1),
        FileRefDraft.draft(tmp_path / "model.bin", step_number=1),
        CustomDraft.draft("structure", b"ATOM", "x.pdb", {"chains": ["A", "B"], "resolution": 1.5}),
    ]
    artifacts = [draft.finalize() for draft in made]
    store.commit_wave([store.stage_execution(make_record(artifacts))])
    ids = [a.artifact_id for a in artifacts] + ["f" * 32]

    full = store.load_artifacts(ids)
    dry = store.load_artifacts(ids, content=False)

    assert dry == {i: dataclasses.replace(a, content=None) for i, a in full.items()}
    assert dry[artifacts[0].artifact_id].size == len(b"a,b\n1,2\n3,4\n")
    assert full[artifacts[0].artifact_id].content == b"a,b\n1,2\n3,4\n"  # the default reads it


def test_load_contents_of_rows_read_without_content_is_the_full_read(
    store: DeltaStore, make_record: RecordFactory, tmp_path: Path
) -> None:
    (tmp_path / "model.bin").write_bytes(b"weights")
    large = b"x,y\n" + b"1,2\n" * (LARGE_CONTENT_BYTES // 4)  # kept in a file of its own
    made = [
        DataDraft.draft(b"a,b\n1,2\n", "table.csv", step_number=1),
        DataDraft.draft(large, "large.csv", step_number=1),
        ConfigDraft.draft({"model": {"$artifact": "e" * 32}}, "run.json", step_number=1),
        FileRefDraft.draft(tmp_path / "model.bin", step_number=1),
        CustomDraft.draft("structure", b"ATOM", "x.pdb", {"chains": ["A"], "resolution": 2.0}),
    ]
    artifacts = [draft.finalize() for draft in made]
    store.commit_wave([store.stage_execution(make_record(artifacts))])
    ids = [a.artifact_id for a in artifacts]
    dry = store.load_artifacts(ids, content=False)
    gone = dataclasses.replace(dry[ids[0]], artifact_id="f" * 32)  # a row its table lacks

    read = store.load_contents({**dry, gone.artifact_id: gone})

    assert read == store.load_artifacts(ids)  # the same artifacts, the one not there left out
    assert read[ids[1]].content == large


def test_load_artifacts_without_content_sizes_function_step_rows_like_the_full_read(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    step = make_step(value={"loss": 0.25})
    commit_function_step(store, step)
    ids = [step.value.artifact_id, step.output.artifact_id]

    dry = store.load_artifacts(ids, content=False)

    full = store.load_artifacts(ids)
    assert dry == {i: dataclasses.replace(a, content=None) for i, a in full.items()}
    assert dry[step.value.artifact_id].size == len(b'{"loss":0.25}')


def test_read_table_with_columns_returns_only_those_columns(
    store: DeltaStore, make_record: RecordFactory
) -> None:
    artifact = CustomDraft.draft("structure", b"ATOM", "x.pdb", {"chains": [], "resolution": 2.0})
    store.commit_wave([store.stage_execution(make_record([artifact.finalize()]))])
    spec = table_for_type("structure")

    frame = read_table(store.layout, spec, pl.col("size") > 0, columns=["artifact_id", "size"])
    missing = read_table(store.layout, table_for_type("data"), columns=["artifact_id"])

    assert frame.columns == ["artifact_id", "size"]
    assert frame.get_column("size").to_list() == [4]
    assert missing.columns == ["artifact_id"]
    assert missing.is_empty()


def test_load_artifacts_without_content_measures_a_row_written_without_a_size(
    store: DeltaStore,
) -> None:
    # An older stemma wrote function-step rows without a size: the full read measured the content.
    artifact_id = "d" * 32
    content_row = {c: None for c in METRICS.columns} | {
        "artifact_id": artifact_id,
        "content": '{"loss":0.5}',
        "original_name": "value.json",
    }
    append_rows(store.layout, METRICS, METRICS.frame([content_row]))
    index_row = {"artifact_id": artifact_id, "artifact_type": "metric", "created_at": T0}
    append_rows(store.layout, ARTIFACT_INDEX, ARTIFACT_INDEX.frame([index_row]))

    (dry,) = store.load_artifacts([artifact_id], content=False).values()

    (full,) = store.load_artifacts([artifact_id]).values()
    assert dry == dataclasses.replace(full, content=None)
    assert dry.size == len(b'{"loss":0.5}')
