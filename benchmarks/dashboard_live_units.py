"""What a running step's live Executions tab costs to keep up with at 10,000 staged units.

    python benchmarks/dashboard_live_units.py DIR [UNITS]

Stages ``UNITS`` (default 10,000) one-unit Delta bundles of step 1 under ``DIR`` (each its
``executions.parquet`` sentinel, as a worker stages it), ages their folders a minute, then
times :class:`~stemma.tui.client.live_executions.LiveExecutions`: its first read (every
bundle's sentinel, once) and the refreshes after it (what the step screen pays every two
seconds: a ``stat`` per folder, no file read). Prints one JSON line of seconds.

Here (2 shared cores): first read 2.2-2.6 s, a refresh 46-72 ms; before folders kept their
listings and sentinels were read together, 10.3 s and 430-515 ms.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
import uuid
from pathlib import Path

import polars as pl

from stemma.storage.schemas import EXECUTIONS
from stemma.tui.client.live_executions import LiveExecutions

REFRESHES = 5


def stage(root: Path, units: int, now: dt.datetime) -> None:
    """``units`` one-unit bundles of step 1 (``copy``), one step run."""
    for _ in range(units):
        execution = uuid.uuid4().hex
        row: dict[str, object] = {column: None for column in EXECUTIONS.columns}
        row.update(
            execution_run_id=execution,
            execution_spec_id="spec",
            step_run_id="step-run",
            step_spec_id="step-spec",
            step_name="copy",
            step_number=1,
            started_at=now,
            ended_at=now,
            success=True,
            worker="node:1",
        )
        bundle = root / "staging" / "1_copy" / execution[:2] / execution[2:4] / execution
        bundle.mkdir(parents=True)
        frame = pl.DataFrame([row], schema=EXECUTIONS.polars_schema)
        frame.write_parquet(bundle / "executions.parquet")
    old = time.time() - 60  # folders changed in the last second are listed again anyway
    for folder, _, _ in os.walk(root / "staging"):
        os.utime(folder, (old, old))


def main(root: Path, units: int) -> None:
    """Stage, then time the first read and the refreshes."""
    now = dt.datetime.now(dt.UTC)
    stage(root, units, now)
    live = LiveExecutions(root, number=1, name="copy", operation="copy")
    since = now - dt.timedelta(minutes=5)
    started = time.perf_counter()
    rows = live.rows(since=since, step_run_id="step-run")
    first = time.perf_counter() - started
    assert len(rows) == units, f"read {len(rows)} of {units} units"
    refreshes: list[float] = []
    for _ in range(REFRESHES):
        started = time.perf_counter()
        live.rows(since=since, step_run_id="step-run")
        refreshes.append(time.perf_counter() - started)
    print(json.dumps({"units": units, "first_read_s": first, "refresh_s": refreshes}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 10_000)
