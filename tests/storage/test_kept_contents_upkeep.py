"""Contents kept as files: ``stemma check`` names a missing or cut one, ``stemma vacuum`` removes
one no artifact refers to (a unit that was never committed), never one a row or a staged bundle
still names."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.bench_ops import random_csv
from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import DataDraft, FinalizedArtifact
from stemma.storage import DeltaStore
from stemma.storage.check_findings import Severity
from stemma.storage.content_files import LARGE_CONTENT_BYTES, key, write_content
from stemma.storage.maintenance import vacuum_root
from stemma.storage.root_check import check_root

RecordFactory = Callable[..., ExecutionRecord]
_DAY = 24 * 3600


def _large(seed: int) -> FinalizedArtifact:
    content = random_csv(random.Random(seed), LARGE_CONTENT_BYTES + 100_000)
    return DataDraft.draft(content, f"big{seed}.csv", step_number=1).finalize()


def _committed(root: Path, make_record: RecordFactory, artifact: FinalizedArtifact) -> Path:
    store = DeltaStore(root)
    store.commit_wave([store.stage_execution(make_record([artifact]))])
    return root / key(artifact.artifact_id)


def test_check_names_a_missing_content_file_and_one_cut_short(
    tmp_path: Path, make_record: RecordFactory
) -> None:
    root = tmp_path / "root"
    gone, cut = _large(1), _large(2)
    _committed(root, make_record, gone).unlink()
    kept = _committed(root, make_record, cut)
    kept.write_bytes(kept.read_bytes()[:1000])

    report = check_root(root)

    problems = {Path(f.problem.path): f.problem for f in report.findings}
    assert set(problems) == {root / key(gone.artifact_id), root / key(cut.artifact_id)}
    assert all(p.severity is Severity.DAMAGED for p in problems.values())
    assert "is missing" in problems[root / key(gone.artifact_id)].what
    said = problems[root / key(cut.artifact_id)].what
    assert f"holds 1000 bytes where its row records {cut.size}" in said
    assert "artifacts/data" in said


def test_check_of_sound_kept_contents_finds_nothing(
    tmp_path: Path, make_record: RecordFactory
) -> None:
    root = tmp_path / "root"
    _committed(root, make_record, _large(3))

    assert check_root(root).clean


def test_vacuum_removes_an_old_file_nothing_refers_to_and_keeps_every_named_one(
    tmp_path: Path, make_record: RecordFactory
) -> None:
    root = tmp_path / "root"
    committed = _committed(root, make_record, _large(4))
    store = DeltaStore(root)
    staged_artifact = _large(5)
    store.stage_execution(make_record([staged_artifact], execution_run_id="e" * 32))
    staged = root / key(staged_artifact.artifact_id)
    orphan_id = "0" * 32
    write_content(store.layout, orphan_id, b"left by a unit that was never committed")
    orphan = root / key(orphan_id)
    young_id = "1" * 32
    write_content(store.layout, young_id, b"a unit's, committed any moment now")
    week_ago = time.time() - 7 * _DAY
    for path in (committed, staged, orphan):
        os.utime(path, (week_ago, week_ago))

    dry = vacuum_root(root, retain_hours=48)
    assert [r.path for r in dry.removals if r.kind == "contents"] == [orphan]
    assert orphan.exists()  # a dry run removes nothing

    vacuum_root(root, retain_hours=48, apply=True)

    assert not orphan.exists()
    assert committed.exists()  # named by a row
    assert staged.exists()  # named by a staged bundle
    assert (root / key(young_id)).exists()  # younger than the retention
    got = DeltaStore(root).load_artifacts([staged_artifact.artifact_id])
    assert got == {}  # (not committed yet: recovery commits it, and its file is there)
    assert store.recover() == 1
    loaded = DeltaStore(root).load_artifacts([staged_artifact.artifact_id])
    assert loaded[staged_artifact.artifact_id].content == staged.read_bytes()
