"""The dashboard benchmark's store: 1,000 runs and 10^6 executions, written in bulk.

The tables are written directly with the storage package's declared schemas (never by running
10^6 units). The shape follows a real root: R finished runs of a five-step pipeline
(generate → transform → metrics, filter → composite), each step a ``running`` and a final event
in ``orchestration/steps`` (one Delta commit per run, as the orchestrator's waves write them),
E/(5R) executions per step in ``orchestration/executions`` (one commit per ten runs), a final
``runs/{id}/state.json`` per run, and one running run (this process's pid, fresh heartbeat).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import socket
import time
import uuid
from dataclasses import MISSING
from typing import Any

from harness import load

STEPS = (
    ("example.generate", ()),
    ("example.transform", (0,)),
    ("example.metrics", (1,)),
    ("example.filter", (1,)),
    ("example.composite", (2, 3)),
)
"""The pipeline every run ran: (step name, upstream step numbers)."""
LIVE_RUN = "live_20261129_235959_0000beef"
"""The running run whose screen the sessions watch (this process is its owner)."""
HOST = "node-a"
"""Where every finished run ran: the runs list shows it in each of their rows."""
T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
"""When the first finished run started; each next one started an hour later."""


def write_state_file(root: pathlib.Path, state: Any) -> None:
    """Write ``state`` (a ``RunState``) as ``runs/{id}/state.json``, without its default fields.

    A field left at its default reads back the same in this checkout, and a ``--baseline``
    checkout from before that field existed can read the file too (its ``RunState`` refuses
    unknown keys): otherwise the baseline would skip every state file and paint from history.
    """
    from dataclasses import fields

    data = json.loads(state.to_json())
    for field in fields(state):
        default = field.default
        if default is not MISSING and data.get(field.name) == _json_value(default):
            del data[field.name]
    directory = root / "runs" / state.run_id
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f".state.json.{uuid.uuid4().hex}.tmp"
    partial.write_text(json.dumps(data, indent=1, sort_keys=True))
    partial.replace(directory / "state.json")


def _json_value(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(value))


def build_store(root: pathlib.Path, runs: int, executions: int) -> float:
    """Write the store's tables and state files; returns the seconds it took."""
    import polars as pl
    from deltalake import write_deltalake

    from stemma.core.live import RunState, RunStatus, StepState
    from stemma.storage.schemas import EXECUTIONS
    from stemma.storage.schemas import STEPS as STEPS_TABLE

    started = time.perf_counter()
    delta = root / "delta"
    per_step = max(1, executions // (runs * len(STEPS)))
    pending: list[pl.DataFrame] = []
    for index in range(runs):
        run_id = f"demo_{(T0 + dt.timedelta(hours=index)):%Y%m%d_%H%M%S}_{index:08x}"
        begin = T0 + dt.timedelta(hours=index)
        step_rows: list[dict[str, Any]] = []
        states: list[StepState] = []
        specs: list[str] = []
        for number, (name, upstream) in enumerate(STEPS):
            step_run_id, spec_id = uuid.uuid4().hex, f"{number:02d}" + uuid.uuid4().hex[2:]
            specs.append(spec_id)
            at = begin + dt.timedelta(seconds=60 * number)
            ended = at + dt.timedelta(seconds=55)
            inputs = {f"in{u}": {"role": "out", "step": u} for u in upstream}
            common = {
                "step_run_id": step_run_id,
                "step_spec_id": spec_id,
                "pipeline_run_id": run_id,
                "step_number": number,
                "step_name": name,
                "operation": name,
                "version": "v0",
                "params": '{"overrides":{"environment":{},"tool":{}},"params":{}}',
                "dep_fingerprints": [specs[u] for u in upstream],
                "backend": "local",
                "output_roles": ["out"],
            }
            step_rows.append(
                {
                    **common,
                    "status": "running",
                    "total_count": 0,
                    "succeeded_count": 0,
                    "failed_count": 0,
                    "timestamp": at,
                    "metadata": json.dumps({"inputs": inputs}),
                }
            )
            step_rows.append(
                {
                    **common,
                    "status": "completed",
                    "total_count": per_step,
                    "succeeded_count": per_step,
                    "failed_count": 0,
                    "timestamp": ended,
                    "duration_seconds": 55.0,
                    "metadata": json.dumps({"inputs": inputs, "execution_cache_hits": 0}),
                }
            )
            pending.append(_executions(pl, common, per_step, at))
            states.append(
                StepState(
                    number=number,
                    name=name,
                    operation=name,
                    status="completed",
                    total=per_step,
                    succeeded=per_step,
                    started_at=at.isoformat(),
                    ended_at=ended.isoformat(),
                )
            )
        frame = pl.DataFrame(step_rows, schema=STEPS_TABLE.polars_schema, orient="row")
        write_deltalake(STEPS_TABLE.path(delta), STEPS_TABLE.to_arrow(frame), mode="append")
        if len(pending) >= 10 * len(STEPS) or index == runs - 1:
            write_deltalake(
                EXECUTIONS.path(delta), EXECUTIONS.to_arrow(pl.concat(pending)), mode="append"
            )
            pending = []
        write_state_file(
            root,
            RunState(
                run_id=run_id,
                name="demo",
                status=RunStatus.COMPLETED,
                pid=1,
                host=HOST,
                root=str(root),
                backend="local",
                started_at=begin.isoformat(),
                heartbeat=(begin + dt.timedelta(seconds=300)).isoformat(),
                ended_at=(begin + dt.timedelta(seconds=300)).isoformat(),
                steps=tuple(states),
            ),
        )
        if index % 100 == 99:
            print(f"  built {index + 1} runs  [{load()}]", flush=True)
    return time.perf_counter() - started


def _executions(pl: Any, step: dict[str, Any], count: int, at: dt.datetime) -> Any:
    ids = [uuid.uuid4().hex for _ in range(count)]
    return pl.DataFrame(
        {
            "execution_run_id": ids,
            "execution_spec_id": ids,
            "step_run_id": [step["step_run_id"]] * count,
            "step_spec_id": [step["step_spec_id"]] * count,
            "step_name": [step["step_name"]] * count,
            "step_number": [step["step_number"]] * count,
            "operation": [step["operation"]] * count,
            "version": ["v0"] * count,
            "params": ["{}"] * count,
            "overrides": ['{"environment":{},"tool":{}}'] * count,
            "started_at": [at + dt.timedelta(milliseconds=50 * i) for i in range(count)],
            "ended_at": [at + dt.timedelta(milliseconds=50 * i + 40) for i in range(count)],
            "worker": [f"{HOST}:4242"] * count,
            "backend": ["local"] * count,
            "success": [True] * count,
            "metadata": ["{}"] * count,
        }
    ).with_columns(
        pl.lit(None, dtype=pl.String).alias(column)
        for column in ("error", "tool_output", "worker_log", "provenance")
    )


def write_live_run(root: pathlib.Path) -> None:
    """The run being watched: running, owned by this (living) process, heartbeat now."""
    from stemma.core.live import RunState, RunStatus, StepState

    now = dt.datetime.now(dt.UTC)
    steps = tuple(
        StepState(
            number=number,
            name=name,
            operation=name,
            status="completed" if number == 0 else "running" if number == 1 else "pending",
            total=200 if number < 2 else 0,
            succeeded=200 if number == 0 else 80 if number == 1 else 0,
            running=2 if number == 1 else 0,
            started_at=now.isoformat() if number < 2 else None,
            ended_at=now.isoformat() if number == 0 else None,
            upstream=upstream,
        )
        for number, (name, upstream) in enumerate(STEPS)
    )
    write_state_file(
        root,
        RunState(
            run_id=LIVE_RUN,
            name="live",
            status=RunStatus.RUNNING,
            pid=os.getpid(),
            host=socket.gethostname(),
            root=str(root),
            backend="local",
            started_at=now.isoformat(),
            heartbeat=now.isoformat(),
            steps=steps,
        ),
    )


def commit_step_event(root: pathlib.Path) -> None:
    """One commit to the steps table, as the watched run's orchestrator makes: a step event."""
    import polars as pl
    from deltalake import write_deltalake

    from stemma.storage.schemas import STEPS as STEPS_TABLE

    row = {
        "step_run_id": uuid.uuid4().hex,
        "step_spec_id": uuid.uuid4().hex,
        "pipeline_run_id": LIVE_RUN,
        "step_number": 1,
        "step_name": STEPS[1][0],
        "status": "running",
        "operation": STEPS[1][0],
        "dep_fingerprints": [],
        "output_roles": ["out"],
        "timestamp": dt.datetime.now(dt.UTC),
        "metadata": json.dumps({"inputs": {"in0": {"role": "out", "step": 0}}}),
    }
    frame = pl.DataFrame([row], schema=STEPS_TABLE.polars_schema, orient="row")
    write_deltalake(STEPS_TABLE.path(root / "delta"), STEPS_TABLE.to_arrow(frame), mode="append")


FILTERED_NAME = "zeta"
"""The name of the filter benchmark's oldest tenth of runs: the only ones with a ``z`` in
their text (ids, names, hosts and times have none), so typing ``z`` keeps exactly them."""


def build_state_runs(root: pathlib.Path, runs: int) -> float:
    """A root of ``runs`` finished runs with state files only (the filter benchmark's list).

    The oldest tenth are named :data:`FILTERED_NAME`, the rest ``demo``; they are written
    oldest first, so the newest state files (the first screen's) are ``demo`` runs. No Delta
    table: the runs list shows every run from its state file, which is what is timed here.
    Returns the seconds it took.
    """
    from stemma.core.live import RunState, RunStatus

    started = time.perf_counter()
    for index in range(runs):
        name = FILTERED_NAME if index < runs // 10 else "demo"
        begin = T0 + dt.timedelta(minutes=10 * index)
        ended = (begin + dt.timedelta(seconds=300)).isoformat()
        write_state_file(
            root,
            RunState(
                run_id=f"{name}_{begin:%Y%m%d_%H%M%S}_{index:08x}",
                name=name,
                status=RunStatus.COMPLETED if index % 7 else RunStatus.FAILED,
                pid=1,
                host=HOST,
                root=str(root),
                backend="local",
                started_at=begin.isoformat(),
                heartbeat=ended,
                ended_at=ended,
            ),
        )
    return time.perf_counter() - started
