"""Large artifact contents (issue 34): stored once, in row groups cut at about 4 MiB, or from
``LARGE_CONTENT_BYTES`` (512 KiB) in a file of their own beside the tables, and read back whole,
also under a root whose path delta-rs escapes."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from benchmarks.bench_ops import random_csv
from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import DataDraft
from stemma.storage import DeltaStore
from stemma.storage.content_files import LARGE_CONTENT_BYTES
from stemma.storage.errors import DamagedTableError
from stemma.storage.tables import ROW_GROUP_CONTENT_BYTES

RecordFactory = Callable[..., ExecutionRecord]


@pytest.mark.parametrize("root_name", ["root", "root with space é"])
def test_contents_below_the_file_cut_are_kept_once_in_row_groups_of_4_mib_and_read_back_whole(
    tmp_path: Path, make_record: RecordFactory, root_name: str
) -> None:
    store = DeltaStore(tmp_path / root_name)
    contents = [random_csv(random.Random(seed), 500_000) for seed in range(12)]
    assert all(len(c) < LARGE_CONTENT_BYTES for c in contents)  # in the table, not in files
    per_group = ROW_GROUP_CONTENT_BYTES // max(len(c) for c in contents)  # 8
    made = [DataDraft.draft(c, f"big{i}.csv", step_number=1) for i, c in enumerate(contents)]
    artifacts = [draft.finalize() for draft in made]
    store.commit_wave([store.stage_execution(make_record(artifacts))])

    [data_file] = (tmp_path / root_name / "delta" / "artifacts" / "data").glob("*.parquet")
    footer = pq.ParquetFile(data_file).metadata
    column = footer.schema.to_arrow_schema().names.index("content")
    chunks = [footer.row_group(g).column(column) for g in range(footer.num_row_groups)]
    # reading one artifact decodes about 4 MiB of its neighbours, not the whole file's
    assert footer.num_row_groups == -(-len(contents) // per_group) == 2
    assert not any(chunk.is_stats_set for chunk in chunks)  # no whole value kept as min or max
    assert not any(chunk.has_dictionary_page for chunk in chunks)
    # Kept once, compressed: not again in a footer or a dictionary (it was 3x the content).
    assert data_file.stat().st_size < sum(len(c) for c in contents)

    again = DeltaStore(tmp_path / root_name)  # a new process's store: nothing cached
    got = again.load_artifacts([a.artifact_id for a in artifacts])
    assert [got[a.artifact_id].content for a in artifacts] == contents
    assert [got[a.artifact_id].size for a in artifacts] == [len(c) for c in contents]


def test_small_contents_keep_one_row_group_an_append(
    store: DeltaStore, make_record: RecordFactory, tmp_path: Path
) -> None:
    made = [DataDraft.draft(b"a,b\n%d,2\n" % i, f"small{i}.csv", step_number=1) for i in range(50)]
    artifacts = [draft.finalize() for draft in made]
    store.commit_wave([store.stage_execution(make_record(artifacts))])

    [data_file] = (tmp_path / "root" / "delta" / "artifacts" / "data").glob("*.parquet")
    assert pq.ParquetFile(data_file).metadata.num_row_groups == 1
    got = store.load_artifacts([a.artifact_id for a in artifacts])
    assert {got[a.artifact_id].content for a in artifacts} == {d.content for d in made}


def test_a_content_of_512_kib_or_more_is_kept_in_its_own_file_and_read_back_whole(
    tmp_path: Path, make_record: RecordFactory
) -> None:
    root = tmp_path / "root with space é"
    store = DeltaStore(root)
    big = random_csv(random.Random(7), LARGE_CONTENT_BYTES + 100)  # (whole lines: up to 82 less)
    small = random_csv(random.Random(8), 1000)
    drafts = [DataDraft.draft(big, "big.csv", step_number=1), DataDraft.draft(small, "s.csv")]
    artifacts = [draft.finalize() for draft in drafts]
    store.commit_wave([store.stage_execution(make_record(artifacts))])

    kept = root / "contents" / artifacts[0].artifact_id[:2] / artifacts[0].artifact_id[2:4]
    assert (kept / artifacts[0].artifact_id).read_bytes() == big  # the file is the content
    assert list(kept.iterdir()) == [kept / artifacts[0].artifact_id]  # no temporary left
    assert not (root / "contents" / artifacts[1].artifact_id[:2]).exists()  # small: in Parquet
    files = sorted((root / "delta" / "artifacts" / "data").glob("*.parquet"))
    rows = pl.read_parquet(files).sort("size")
    assert rows.select("size", pl.col("content").is_null()).rows() == [
        (len(small), False),
        (len(big), True),  # its row: every column but the content
    ]
    # The id is the content's, as before (keys unchanged): a draft of the same bytes agrees.
    assert artifacts[0].artifact_id == DataDraft.draft(big, "other.csv").finalize().artifact_id

    again = DeltaStore(root)  # a new process's store: nothing cached
    got = again.load_artifacts([a.artifact_id for a in artifacts])
    assert [got[a.artifact_id].content for a in artifacts] == [big, small]
    assert [got[a.artifact_id].size for a in artifacts] == [len(big), len(small)]
    rows_only = again.load_artifacts([artifacts[0].artifact_id], content=False)
    assert rows_only[artifacts[0].artifact_id].content is None  # the file is not read
    assert rows_only[artifacts[0].artifact_id].size == len(big)


def test_a_kept_content_whose_file_is_gone_is_named_as_damage(
    tmp_path: Path, make_record: RecordFactory
) -> None:
    root = tmp_path / "root"
    store = DeltaStore(root)
    artifact = DataDraft.draft(
        random_csv(random.Random(9), LARGE_CONTENT_BYTES + 100), "big.csv", step_number=1
    ).finalize()
    store.commit_wave([store.stage_execution(make_record([artifact]))])
    [kept] = (root / "contents").rglob(artifact.artifact_id)
    kept.unlink()

    with pytest.raises(DamagedTableError) as raised:
        DeltaStore(root).load_artifacts([artifact.artifact_id])

    message = str(raised.value)
    assert "artifacts/data" in message
    assert f"contents/{artifact.artifact_id[:2]}/{artifact.artifact_id[2:4]}/" in message
    assert "is missing" in message
    assert "stemma check" in message
