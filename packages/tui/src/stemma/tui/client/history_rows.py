"""The runs list's history half, aggregated in polars: one row per run from the steps table.

Building :class:`~stemma.core.execution_records.StepEvent` objects for every event of every run
costs seconds on a big store; the runs list only needs a few aggregates per run.
"""

# (polars' signatures name numpy types and numpy is not installed, so every polars method reads
# as partially unknown; arguments and results are still checked.)

from __future__ import annotations

import datetime as dt
from typing import cast

import polars as pl

from stemma.core.cli.run_rows import FINAL_STEP_STATUSES, RunRow, run_name
from stemma.core.live import RunStatus


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
    return [_row(row) for row in runs.iter_rows(named=True)]


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
    )
