"""``SqliteStore.load_artifacts(..., content=False)``: ids and metadata, the content unread."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Callable
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import ConfigDraft, CustomDraft, DataDraft, FileRefDraft
from stemma.core.operations.specs import register_artifact_type
from stemma.core.store.sqlite import SqliteStore

RecordFactory = Callable[..., ExecutionRecord]

register_artifact_type(
    "sqlite_structure",
    "artifacts/sqlite_structures",
    {"chains": "list<string>", "resolution": "float64"},
)


def test_load_artifacts_without_content_is_the_full_read_minus_the_content(
    store: SqliteStore, make_record: RecordFactory, tmp_path: Path
) -> None:
    (tmp_path / "model.bin").write_bytes(b"weights")
    made = [
        DataDraft.draft(b"a,b\n1,2\n3,4\n", "table.csv", step_number=1, metadata={"k": 1}),
        ConfigDraft.draft({"model": {"$artifact": "e" * 32}}, "run.json", step_number=1),
        FileRefDraft.draft(tmp_path / "model.bin", step_number=1),
        CustomDraft.draft(
            "sqlite_structure", b"ATOM\x00\xff", "x.pdb", {"chains": ["A"], "resolution": 1.5}
        ),
    ]
    artifacts = [draft.finalize() for draft in made]
    store.commit_wave([store.stage_execution(make_record(artifacts))])
    ids = [a.artifact_id for a in artifacts] + ["f" * 32]

    full = store.load_artifacts(ids)
    dry = store.load_artifacts(ids, content=False)

    assert dry == {i: dataclasses.replace(a, content=None) for i, a in full.items()}
    assert full[artifacts[3].artifact_id].content == b"ATOM\x00\xff"  # the default reads it
    assert dry[artifacts[3].artifact_id].size == 6


def test_load_artifacts_without_content_measures_a_row_written_without_a_size(
    store: SqliteStore, make_record: RecordFactory
) -> None:
    artifact = DataDraft.draft(b"x,y\n5,6\n", "t.csv", step_number=1).finalize()
    store.commit_wave([store.stage_execution(make_record([artifact]))])
    with contextlib.closing(sqlite3.connect(store.database)) as connection, connection:
        connection.execute("UPDATE artifacts SET size = NULL")  # as an older row may hold

    (dry,) = store.load_artifacts([artifact.artifact_id], content=False).values()

    (full,) = store.load_artifacts([artifact.artifact_id]).values()
    assert dry == dataclasses.replace(full, content=None)
    assert dry.size == len(b"x,y\n5,6\n")
