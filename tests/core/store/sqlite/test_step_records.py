"""Function steps' records: ``completed`` events naming their ``OUT`` and their value."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path

from stemma.core.canonical import canonical_json
from stemma.core.execution_records import ExecutionRecord, StepEvent
from stemma.core.operations.drafts import FileRefDraft, MetricDraft
from stemma.core.records import StepStatus
from stemma.core.store.sqlite import SqliteStore

RecordFactory = Callable[..., ExecutionRecord]
EventFactory = Callable[..., StepEvent]


def _function_step(
    store: SqliteStore,
    make_record: RecordFactory,
    make_event: EventFactory,
    tmp_path: Path,
    *,
    spec: str,
    minutes: int,
    value: dict[str, float],
) -> StepEvent:
    """Commit a function step's unit (OUT as a file ref, value as a metric) and its events."""
    out = tmp_path / f"out-{spec}-{minutes}"
    out.write_text(f"{spec} at {minutes}")
    output = FileRefDraft.draft(out, relative_to=tmp_path).finalize()
    returned = MetricDraft.draft(value, "value.json").finalize()
    assert returned.content == canonical_json(value).encode()
    unit = make_record([output, returned], step_run_id=f"{spec}-{minutes}")
    store.commit_wave([store.stage_execution(unit)])
    done = make_event(
        StepStatus.COMPLETED,
        minutes,
        run=f"{spec}-{minutes}",
        spec=spec,
        name="train",
        metadata={
            "output_path": out.name,
            "output_artifact_id": output.artifact_id,
            "value_artifact_id": returned.artifact_id,
        },
    )
    store.record_events([make_event(StepStatus.RUNNING, minutes, spec=spec, name="train"), done])
    return done


def test_completed_returns_the_latest_record_with_output_and_value(
    store: SqliteStore, make_record: RecordFactory, make_event: EventFactory, tmp_path: Path
) -> None:
    _function_step(
        store, make_record, make_event, tmp_path, spec="fp-a", minutes=1, value={"loss": 0.5}
    )
    newer = _function_step(
        store, make_record, make_event, tmp_path, spec="fp-a", minutes=9, value={"loss": 0.25}
    )
    store.record_events([make_event(StepStatus.FAILED, 20, spec="fp-a", name="train")])

    found = store.completed(["fp-a", "fp-unknown"])

    assert set(found) == {"fp-a"}
    record = found["fp-a"]
    assert record.value == {"loss": 0.25}
    assert record.value_json == '{"loss":0.25}'
    assert (record.fingerprint, record.name, record.status) == ("fp-a", "train", "completed")
    assert record.step_run_id == newer.step_run_id
    assert record.run_id == newer.pipeline_run_id
    assert record.timestamp == newer.timestamp
    assert record.output_path == "out-fp-a-9"
    assert record.output_artifact_id == newer.metadata["output_artifact_id"]
    assert record.config == {"threshold": 0.5}
    assert store.completed([]) == {}


def test_latest_by_name_takes_the_newest_of_any_fingerprint(
    store: SqliteStore, make_record: RecordFactory, make_event: EventFactory, tmp_path: Path
) -> None:
    _function_step(store, make_record, make_event, tmp_path, spec="fp-a", minutes=5, value={"v": 1})
    _function_step(store, make_record, make_event, tmp_path, spec="fp-b", minutes=7, value={"v": 2})

    latest = store.latest_by_name("train")

    assert latest is not None
    assert (latest.fingerprint, latest.value) == ("fp-b", {"v": 2})
    assert store.latest_by_name("other") is None


def test_a_completed_event_without_a_value_reads_back_without_one(
    store: SqliteStore, make_event: EventFactory
) -> None:
    event = dataclasses.replace(
        make_event(StepStatus.COMPLETED, 0, name="train"),
        timestamp=dt.datetime(2026, 1, 1, 12, 0),  # naive: taken as UTC
    )
    store.record_events([event])

    record = store.completed(["fp-1"])["fp-1"]

    assert (record.value_json, record.output_path, record.output_artifact_id) == (None, None, None)
    assert record.timestamp == dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)
