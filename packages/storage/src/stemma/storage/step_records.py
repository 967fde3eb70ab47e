"""Reading step records back for the runner's cache checks: one filtered scan per table."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection
from typing import Any, cast

import polars as pl

from stemma.core.records import StepRecord, StepStatus
from stemma.core.store.locations import RootLayout
from stemma.storage.schemas import METRICS, STEPS
from stemma.storage.table_damage import read_table_checked as read_table
from stemma.storage.table_places import table_place

_COMPLETED = pl.col("status") == StepStatus.COMPLETED.value


def completed_records(layout: RootLayout, fingerprints: Collection[str]) -> dict[str, StepRecord]:
    """The latest ``completed`` record of each fingerprint in ``fingerprints`` that has one.

    Args:
        layout: the store root.
        fingerprints: step fingerprints (``step_spec_id``) to look up.

    Returns:
        A record per fingerprint found, with its output path, output artifact and value filled.
    """
    if not fingerprints or not table_place(layout, STEPS.name).exists():
        return {}
    rows = read_table(layout, STEPS, _COMPLETED & pl.col("step_spec_id").is_in(list(fingerprints)))
    latest = rows.sort("timestamp").unique(subset="step_spec_id", keep="last")
    records = _to_records(layout, latest)
    return {record.fingerprint: record for record in records}


def latest_completed_by_name(layout: RootLayout, name: str) -> StepRecord | None:
    """The most recent ``completed`` record of a step called ``name``, any fingerprint."""
    if not table_place(layout, STEPS.name).exists():
        return None
    rows = read_table(layout, STEPS, _COMPLETED & (pl.col("step_name") == name))
    if rows.is_empty():
        return None
    return _to_records(layout, rows.sort("timestamp").tail(1))[0]


def _to_records(layout: RootLayout, rows: pl.DataFrame) -> list[StepRecord]:
    parsed = [(row, _metadata(row)) for row in rows.iter_rows(named=True)]
    value_ids = [
        str(meta["value_artifact_id"]) for _, meta in parsed if meta.get("value_artifact_id")
    ]
    values: dict[str, str] = {}
    if value_ids:
        metrics = read_table(layout, METRICS, pl.col("artifact_id").is_in(value_ids))
        values = dict(
            zip(
                metrics.get_column("artifact_id").to_list(),
                metrics.get_column("content").to_list(),
                strict=True,
            )
        )
    return [_record(row, meta, values) for row, meta in parsed]


def _record(row: dict[str, Any], meta: dict[str, Any], values: dict[str, str]) -> StepRecord:
    value_id = meta.get("value_artifact_id")
    return StepRecord(
        fingerprint=row["step_spec_id"],
        name=row["step_name"],
        version=row["version"] or "",
        status=StepStatus(row["status"]),
        step_run_id=row["step_run_id"],
        run_id=row["pipeline_run_id"],
        timestamp=row["timestamp"].astimezone(dt.UTC),
        config=json.loads(row["params"]) if row["params"] else {},
        output_path=meta.get("output_path"),
        output_artifact_id=meta.get("output_artifact_id"),
        value_json=values.get(value_id) if isinstance(value_id, str) else None,
        error=row["error"],
    )


def _metadata(row: dict[str, Any]) -> dict[str, Any]:
    text = row["metadata"]
    if not text:
        return {}
    return cast(dict[str, Any], json.loads(text))
