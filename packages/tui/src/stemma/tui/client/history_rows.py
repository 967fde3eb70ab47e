"""The steps table, aggregated in polars: one row per run, and earlier steps' paces for ETAs.

Building :class:`~stemma.core.execution_records.StepEvent` objects for every event of every run
costs seconds on a big store; the runs list only needs a few aggregates per run.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import cast

import polars as pl

from stemma.core.live import RunStatus
from stemma.core.runs.run_rows import FINAL_STEP_STATUSES, RunRow, run_name
from stemma.tui.client.eta import Paces, PaceSample


def rows_from_steps_table(frame: pl.DataFrame) -> list[RunRow]:
    """One row per run in a steps-table frame (same rules as ``rows_from_history``)."""
    if frame.is_empty():
        return []
    latest = (
        frame.select("pipeline_run_id", "step_number", "status", "failed_count", "timestamp")
        .sort("timestamp")
        .group_by("pipeline_run_id", "step_number")
        .agg(
            pl.col("status").last(),
            pl.col("failed_count").last().fill_null(0),
            pl.col("timestamp").min().alias("first"),
            pl.col("timestamp").max().alias("last"),
        )
    )
    status = pl.col("status")
    runs = latest.group_by("pipeline_run_id").agg(
        pl.len().alias("steps_total"),
        status.is_in(list(FINAL_STEP_STATUSES)).sum().alias("steps_done"),
        (status == "running").any().alias("running"),
        ((status == "failed") | (pl.col("failed_count") > 0)).any().alias("failed"),
        (status == "cancelled").any().alias("cancelled"),
        pl.col("first").min().alias("started"),
        pl.col("last").max().alias("ended"),
    )
    runs = runs.join(_provenance(frame), on="pipeline_run_id", how="left")
    return [_row(row) for row in runs.iter_rows(named=True)]


def _provenance(frame: pl.DataFrame) -> pl.DataFrame:
    """Per run, who started it, where, and its command line: its running events record them."""
    found = pl.col("metadata").str.json_path_match
    return (
        frame.filter(pl.col("status") == "running")
        .group_by("pipeline_run_id")
        .agg(pl.col("metadata").first())
        .select(
            "pipeline_run_id",
            found("$.provenance.user").alias("user"),
            found("$.provenance.host").alias("host"),
            found("$.provenance.command_line").alias("command_line"),
        )
    )


def pace_samples(frame: pl.DataFrame) -> list[PaceSample]:
    """Every completed step event with a duration and executed units, for :mod:`eta`."""
    return [
        PaceSample(
            step_spec_id=spec, step_name=name, operation=op, seconds=seconds, units=int(units)
        )
        for spec, name, op, seconds, units in _completed(frame).iter_rows()
    ]


def paces_from_steps_table(frame: pl.DataFrame) -> Paces:
    """``eta.paces(pace_samples(frame))``, averaged in polars (thousands of events, few steps)."""
    done = _completed(frame).filter((pl.col("units") > 0) & (pl.col("seconds") >= 0))
    done = done.with_columns((pl.col("seconds") / pl.col("units")).alias("pace"))
    by_spec = done.group_by("step_spec_id").agg(pl.col("pace").mean())
    by_name = done.group_by("step_name", "operation").agg(pl.col("pace").mean())
    return Paces(
        by_spec={spec: pace for spec, pace in by_spec.iter_rows()},
        by_name={(name, op): pace for name, op, pace in by_name.iter_rows()},
    )


def _completed(frame: pl.DataFrame) -> pl.DataFrame:
    hits = pl.col("metadata").str.json_path_match("$.execution_cache_hits").cast(pl.Int64)
    cancelled = pl.col("metadata").str.json_path_match("$.cancelled_units").cast(pl.Int64)
    return frame.filter(
        (pl.col("status") == "completed") & pl.col("duration_seconds").is_not_null()
    ).select(
        "step_spec_id",
        "step_name",
        pl.col("operation").fill_null(""),
        pl.col("duration_seconds").alias("seconds"),
        (pl.col("total_count").fill_null(0) - hits.fill_null(0) - cancelled.fill_null(0)).alias(
            "units"
        ),
    )


def _row(row: dict[str, object]) -> RunRow:
    if row["running"]:
        status = RunStatus.STALE  # a live run writes a state file; this one's writer is gone
    elif row["failed"]:
        status = RunStatus.FAILED
    elif row["cancelled"]:
        status = RunStatus.CANCELLED
    else:
        status = RunStatus.COMPLETED
    started = cast(dt.datetime, row["started"])
    ended = cast(dt.datetime, row["ended"])
    run_id = str(row["pipeline_run_id"])
    return RunRow(
        run_id=run_id,
        name=run_name(run_id),
        status=status,
        started=started,
        ended=None if status is RunStatus.STALE else ended,
        steps_done=int(str(row["steps_done"])),
        steps_total=int(str(row["steps_total"])),
        user=str(row["user"] or ""),
        host=str(row["host"] or ""),
        command=_command(row["command_line"]),
    )


def _command(text: object) -> tuple[str, ...]:
    """``command_line`` as its JSON list was recorded (empty when it was not)."""
    if not isinstance(text, str):
        return ()
    parsed: object = json.loads(text)
    return (
        tuple(str(part) for part in cast(list[object], parsed)) if isinstance(parsed, list) else ()
    )
