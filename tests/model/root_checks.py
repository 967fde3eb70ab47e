"""The invariants the stateful model test holds a root to, read from its real tables.

Each check returns the problems it finds as short sentences (empty: none), so a failing step
of the state machine names every broken promise at once. The tables are read with deltalake
(``tests.faults.crash_tables``); the live states with ``stemma.core.live``.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

import polars as pl
from deltalake import DeltaTable

from stemma.core.cancel_levels import CancelLevel
from stemma.core.live import RunStatus, list_states
from tests.faults.crash_tables import (
    EXECUTION_EDGES,
    EXECUTIONS,
    INDEX,
    STEP_OUTPUTS,
    STEPS,
    delta_tables,
    duplicates,
    orphans,
)

Tables = Mapping[str, pl.DataFrame]
HARD = 3
"""The hard cancel level."""


def read_tables(root: pathlib.Path) -> dict[str, pl.DataFrame]:
    """Every Delta table of ``root`` (an empty frame for one not made yet)."""
    return delta_tables(root)


def committed_keys(tables: Tables) -> set[str]:
    """The execution keys with a committed successful execution."""
    rows = tables.get(EXECUTIONS)
    if rows is None:
        return set()
    return set(rows.filter(pl.col("success")).get_column("execution_spec_id").to_list())


def indexed_twice(tables: Tables) -> list[str]:
    """No artifact indexed twice, and no table repeating a key (or a whole row)."""
    return duplicates(dict(tables))


def dangling(tables: Tables) -> list[str]:
    """Rows naming artifacts or executions the tables lack (only once nothing is staged)."""
    return orphans(dict(tables))


def executed_twice(tables: Tables) -> list[str]:
    """An execution key that succeeded more than once: a rerun, or a second runner, redid it."""
    rows = tables.get(EXECUTIONS)
    if rows is None:
        return []
    counts = rows.filter(pl.col("success")).group_by("execution_spec_id").len()
    again = counts.filter(pl.col("len") > 1)
    return [
        f"execution key {key[:12]} ({n} successful executions) ran again after it succeeded"
        for key, n in again.iter_rows()
    ]


def _final_events(tables: Tables) -> list[dict[str, Any]]:
    steps = tables.get(STEPS)
    if steps is None:
        return []
    return [
        {**row, "metadata": json.loads(row["metadata"] or "{}")}
        for row in steps.filter(pl.col("status") != "running").iter_rows(named=True)
    ]


def _outputs_of(tables: Tables, step_run_id: str) -> set[str]:
    offered = tables.get(STEP_OUTPUTS)
    if offered is None:
        return set()
    rows = offered.filter(pl.col("step_run_id") == step_run_id)
    return set(rows.get_column("artifact_id").drop_nulls().to_list())


def commit_times(root: pathlib.Path, table: str, column: str) -> dict[str, float]:
    """When each value of ``column`` was first committed to ``table`` (its file's write time).

    delta-rs writes a table's data files when it commits them, so a file's modification time in
    the log is its commit time (the test never compacts, which would rewrite files).
    """
    path = root / "delta" / table
    if not (path / "_delta_log").is_dir():
        return {}
    found: dict[str, float] = {}
    actions = pl.DataFrame(DeltaTable(str(path)).get_add_actions(flatten=True))
    for name, written_ms in actions.select("path", "modification_time").iter_rows():
        stamp = float(written_ms) / 1000
        for value in (
            pl.read_parquet(path / unquote(name), columns=[column]).get_column(column).to_list()
        ):
            found[str(value)] = min(found.get(str(value), stamp), stamp)
    return found


def uncommitted_hits(root: pathlib.Path, tables: Tables) -> list[str]:
    """Every cache hit answered from committed work, committed before the hit was recorded.

    A step-level hit names the step run whose outputs it offers (``outputs_from``): that run
    must be committed as completed with no failure. An execution-level hit offers outputs its
    own executions did not make: each must be the output of a successful execution whose row
    was committed no later than the hitting step's own event.
    """
    found: list[str] = []
    index = (
        {str(i) for i in tables[INDEX].get_column("artifact_id").to_list()}
        if INDEX in tables
        else set[str]()
    )
    events = _final_events(tables)
    completed = {
        e["step_run_id"] for e in events if e["status"] == "completed" and not e["failed_count"]
    }
    executions = tables.get(EXECUTIONS, pl.DataFrame())
    edges = tables.get(EXECUTION_EDGES, pl.DataFrame())
    made_by: dict[str, set[str]] = {}  # artifact -> successful executions that output it
    own: dict[str, set[str]] = {}  # step run -> what its executions output
    if not executions.is_empty() and not edges.is_empty():
        outputs = edges.filter(pl.col("direction") == "output").join(
            executions.select("execution_run_id", "step_run_id", "success"), on="execution_run_id"
        )
        for run, step_run, success, artifact in outputs.select(
            "execution_run_id", "step_run_id", "success", "artifact_id"
        ).iter_rows():
            own.setdefault(step_run, set()).add(artifact)
            if success:
                made_by.setdefault(artifact, set()).add(run)
    execution_times = commit_times(root, EXECUTIONS, "execution_run_id")
    event_times = commit_times(root, STEPS, "step_run_id")
    for event in events:
        metadata, step_run = event["metadata"], event["step_run_id"]
        label = f"step {event['step_name']} of run {event['pipeline_run_id']}"
        offered = _outputs_of(tables, step_run)
        if missing := offered - index:
            found.append(f"{label} offers {len(missing)} artifact(s) never indexed")
        if metadata.get("cache") == "step":
            source = str(metadata.get("outputs_from") or "")
            if source not in completed:
                found.append(f"{label} is a step hit on {source[:12]}, not a committed success")
            continue
        if not metadata.get("execution_cache_hits"):
            continue
        hit_time = event_times.get(step_run, float("inf"))
        for artifact in offered - own.get(step_run, set()):
            sources = made_by.get(artifact, set())
            if not sources:
                found.append(f"{label} offers {artifact[:12]} from a hit on no committed success")
            elif min(execution_times.get(r, float("inf")) for r in sources) > hit_time:
                found.append(f"{label} hit {artifact[:12]} before its execution was committed")
    return found


def live_counts_differ(root: pathlib.Path, tables: Tables) -> list[str]:
    """Every final step in a finished run's live state counts as its final event in the tables.

    A run killed mid-way reads ``stale``: its counts stay as last written, nothing to compare.
    A hard-cancelled run too: its stopped steps get their final event from the cancel itself,
    and their executions may outnumber it by units the next start recovered (see below).
    """
    events = {(e["pipeline_run_id"], e["step_number"]): e for e in _final_events(tables)}
    executions = tables.get(EXECUTIONS, pl.DataFrame())
    found: list[str] = []
    for state in list_states(root):
        if state.status in (RunStatus.RUNNING, RunStatus.STALE):
            continue
        for step in state.steps:
            event = events.get((state.run_id, step.number))
            label = f"run {state.run_id} step {step.number} ({step.name})"
            if event is None:
                if step.status != "skipped" or step.total:
                    found.append(f"{label}: live state {step.status}, no final event in the table")
                continue
            metadata = event["metadata"]
            step_hit = metadata.get("cache") == "step"
            table = {
                "status": event["status"],
                "total": event["total_count"],
                "succeeded": event["succeeded_count"],
                "failed": event["failed_count"],
                "cached": event["succeeded_count"]
                if step_hit
                else int(metadata.get("execution_cache_hits") or 0),
                "cancelled": int(metadata.get("cancelled_units") or 0),
            }
            live = {key: getattr(step, key) for key in table}
            if live != table:
                found.append(f"{label}: live state {live} but the tables say {table}")
            ran = (
                executions.filter(pl.col("step_run_id") == event["step_run_id"])
                if not executions.is_empty()
                else executions
            )
            fresh = ran.filter(pl.col("success")).height if not ran.is_empty() else 0
            expected = step.succeeded - step.cached
            # After a hard cancel, a unit that staged between the cancel's last snapshot and its
            # kill is committed by the next start's recovery, under the same attempt: the table
            # may hold more than the frozen live state counted, never fewer.
            recovered = state.cancel_level >= CancelLevel.HARD and fresh > expected
            if not step_hit and fresh != expected and not recovered:
                found.append(
                    f"{label}: live state {step.succeeded - step.cached} units run and succeeded,"
                    f" the executions table {fresh}"
                )
    return found
