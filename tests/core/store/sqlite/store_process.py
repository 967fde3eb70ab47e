"""A process using a SQLite store, for the tests that need a real one (and to kill it).

Run as ``python store_process.py COMMAND ROOT ...``:

- ``stage ROOT COUNT``: stage COUNT one-unit bundles of step ``score`` (each with a metric),
  print their paths as a JSON list, then wait to be killed without committing;
- ``commit ROOT START_FILE BUNDLE...``: wait for START_FILE, commit the bundles as one wave,
  print how many this process committed;
- ``crash-in-commit ROOT BUNDLE...``: commit the bundles, but die by SIGKILL inside the
  transaction, after every row is inserted and before it commits.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord
from stemma.core.operations.drafts import MetricDraft
from stemma.core.store.sqlite import SqliteStore, table_writes


def _record(index: int) -> ExecutionRecord:
    artifact = MetricDraft.draft({"unit": index}, f"u{index}.json", step_number=1).finalize()
    ended = dt.datetime.now(dt.UTC)
    return ExecutionRecord(
        execution_run_id=uuid.uuid4().hex,
        execution_spec_id=f"key-{index}",
        step_run_id="run-staged",
        step_spec_id="spec-staged",
        step_name="score",
        step_number=1,
        operation="Score",
        version="v0",
        params={},
        overrides={},
        started_at=ended,
        ended_at=ended,
        worker=f"localhost:{os.getpid()}",
        backend="local",
        success=True,
        outputs={"out": (artifact.artifact_id,)},
        artifacts=(artifact,),
    )


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{path} never appeared")
        time.sleep(0.002)


def main() -> None:
    command, root = sys.argv[1], Path(sys.argv[2])
    store = SqliteStore(root, staging_timeout=0)
    if command == "stage":
        bundles = [str(store.stage_execution(_record(i))) for i in range(int(sys.argv[3]))]
        print(json.dumps(bundles), flush=True)
        signal.pause()  # killed here, before anything is committed
    elif command == "commit":
        _wait_for(Path(sys.argv[3]))
        print(store.commit_wave([Path(p) for p in sys.argv[4:]]).committed, flush=True)
    elif command == "crash-in-commit":

        def die(*_: object) -> None:
            os.kill(os.getpid(), signal.SIGKILL)

        table_writes.fill_edge_types = die  # runs inside the transaction, after the inserts
        store.commit_wave([Path(p) for p in sys.argv[3:]])
        raise SystemExit("still alive after the commit")
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
