"""Bundles a wave cannot commit are reported, kept or quarantined, and never stop the rest."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from stemma.core.execution_records import ExecutionRecord, StepOutputs
from stemma.core.identity import content_id
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.store.sqlite import ProblemKind, SqliteStore, StagedBundleError

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]


def _note(store: SqliteStore, bundle: Path) -> str:
    return (
        store.layout.logs / "failures" / "step_1_score" / f"{bundle.name}.staging.log"
    ).read_text()


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _garbled(data: bytes) -> bytes:
    return data.replace(b"score", b"scorf")


def _not_json(data: bytes) -> bytes:
    return b"{not json"


def test_a_bundle_that_never_appears_is_reported_missing_and_the_rest_commits(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    good = store.stage_execution(make_record([make_metric(1)]))
    absent = store.layout.staging / "1_score" / "ab" / "cd" / ("abcd" + "0" * 28)

    report = store.commit_wave([good, absent])

    assert report.committed == 1
    (problem,) = report.problems
    assert (problem.bundle, problem.kind, problem.moved_to) == (absent, ProblemKind.MISSING, None)
    assert "left in staging" in _note(store, absent)
    assert problem.to_dict()["kind"] == "missing"


def test_a_bundle_without_its_records_stays_staged_for_recovery(
    store: SqliteStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    bundle = store.stage_execution(make_record([make_metric(1)]))
    records = (bundle / "records.json").read_bytes()
    (bundle / "records.json").unlink()

    report = store.commit_wave([bundle])

    assert report.committed == 0
    assert [(p.kind, p.files) for p in report.problems] == [
        (ProblemKind.MISSING, ("records.json",))
    ]
    assert bundle.is_dir()
    (bundle / "records.json").write_bytes(records)  # the shared filesystem caught up
    assert store.recover() == 1


@pytest.mark.parametrize(
    ("damage", "file"),
    [(_truncated, "records.json"), (_garbled, "records.json"), (_not_json, "sentinel.json")],
)
def test_a_damaged_bundle_is_quarantined_with_a_note_and_the_rest_commits(
    store: SqliteStore,
    make_record: RecordFactory,
    make_metric: MetricFactory,
    damage: Callable[[bytes], bytes],
    file: str,
) -> None:
    good = store.stage_execution(make_record([make_metric(1)]))
    bad_record = make_record([make_metric(2)])
    bad = store.stage_execution(bad_record)
    (bad / file).write_bytes(damage((bad / file).read_bytes()))
    outputs = StepOutputs(
        step_run_id="run-1",
        outputs={"out": (make_metric(1).artifact_id, make_metric(2).artifact_id)},
    )

    report = store.commit_wave([good, bad], step_outputs=outputs)

    assert report.committed == 1
    (problem,) = report.problems
    assert (problem.bundle, problem.kind, problem.files) == (bad, ProblemKind.CORRUPT, (file,))
    moved = store.layout.staging / ".quarantine" / "1_score" / bad.name
    assert problem.moved_to == moved
    assert (moved / file).is_file()
    assert not bad.exists()
    assert f"quarantined to {moved}" in _note(store, bad)
    assert store.executions_by_key([bad_record.execution_spec_id]) == {}
    # the step offers only what was committed
    assert store.step_outputs(["run-1"]) == {"run-1": {"out": (make_metric(1).artifact_id,)}}
    assert store.recover() == 0


def test_a_records_file_of_an_unknown_format_is_quarantined(
    store: SqliteStore, make_record: RecordFactory
) -> None:
    bundle = store.stage_execution(make_record())
    data = (bundle / "records.json").read_bytes().replace(b"bundle/1", b"bundle/9")
    (bundle / "records.json").write_bytes(data)
    sentinel = json.loads((bundle / "sentinel.json").read_text())
    sentinel["records"]["xxh3_128"] = content_id(data)
    (bundle / "sentinel.json").write_text(json.dumps(sentinel))

    (problem,) = store.commit_wave([bundle]).problems

    assert problem.kind is ProblemKind.CORRUPT
    assert "stemma-sqlite-bundle/1" in problem.error


def test_a_path_outside_staging_is_refused_before_anything_is_committed(
    store: SqliteStore, make_record: RecordFactory, tmp_path: Path
) -> None:
    good = store.stage_execution(make_record())
    with pytest.raises(StagedBundleError, match="is not a bundle staged under"):
        store.commit_wave([good, tmp_path / "elsewhere"])
    assert good.is_dir()
    assert not store.database.exists()
