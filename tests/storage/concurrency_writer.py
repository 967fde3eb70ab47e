"""One writer of the concurrency table (test_concurrency_table.py), run as its own process.

``python -m tests.storage.concurrency_writer ROLE ROOT BARRIER INDEX [ARG…]``, with the checkout
on ``PYTHONPATH``; ROOT is a directory or a bucket's URL, given to every store as it is (a writer
of a bucket root takes the store's credentials, and its local half's ``$STEMMA_STATE_DIR``, from
the environment). Every writer imports what it needs, does what it must before the race (stage
its bundles), touches ``BARRIER/ready-{INDEX}`` and waits for ``BARRIER/go``: the test touches
it once every writer is ready, so the races start together rather than one process start-up
apart. A committer touches ``BARRIER/committed-{INDEX}`` when it has finished; the writers that
race it (recovery, vacuum, compaction) go on until every committer is done, and a committer
holds its last step until one of them has begun (``BARRIER/maintaining-*``), so their passes
and the commits interleave whatever the scheduler does. Each writer prints what it did as one
JSON line.

Roles:

- ``pipeline SEED WRITERS``: a ``Pipeline`` runs ``race_operation.RaceGenerate`` once
  (local-thread).
- ``commit RECORDS``: commit pickled function steps one by one, as the engine records them.
- ``commit-auto RECORDS``: the same through a store that compacts its tables after its commits
  once a table holds two small files (``CompactionPolicy(small_files=2)``); it touches
  ``BARRIER/maintaining-{INDEX}`` once its store has compacted, and waits for its last
  compaction before it reports.
- ``commit-staged RECORDS``: stage them all before the race, then commit each staged bundle.
- ``recover COMMITTERS``, ``vacuum COMMITTERS``, ``compact COMMITTERS``: the maintenance of
  one root, in a loop, until the COMMITTERS committers are done.
"""

from __future__ import annotations

import json
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from stemma.core.execution_records import ExecutionRecord, StepEvent, StepOutputs
from stemma.storage import DeltaStore
from stemma.storage.compaction_policy import CompactionPolicy
from stemma.storage.maintenance import compact_root, vacuum_root

DEADLINE_SECONDS = 120.0
"""How long a writer waits for the others before it gives up (the test then fails)."""
PASS_PAUSE_SECONDS = 0.1
"""Between two passes of a maintenance loop: leaves the committers the CPU (2 cores, 4 writers)."""

T = TypeVar("T")
Records = list[tuple[ExecutionRecord, StepOutputs, list[StepEvent]]]


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition()`` until it holds; fail loudly past the deadline."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {DEADLINE_SECONDS:.0f} s")
        time.sleep(0.01)


def count(barrier: Path, pattern: str) -> int:
    """How many barrier files match ``pattern`` (``asked-*``, ``committed-*``)."""
    return len(list(barrier.glob(pattern)))


def run_pipeline(root: str, barrier: Path, index: int, seed: int, writers: int) -> dict[str, Any]:
    """One run of ``RaceGenerate``: what it offers and whether it found the step built."""
    # Imported here: the other roles start faster without the Pipeline and its engine.
    from stemma.core.front.pipeline import Pipeline
    from tests.storage.race_operation import RaceGenerate

    pipeline = Pipeline.create("race", root=root, backend="local-thread", max_workers=1)
    params = {"seed": seed, "barrier": str(barrier), "writers": writers}
    (barrier / f"asked-{index}").touch()
    result = pipeline.run(RaceGenerate, params=params)
    summary = pipeline.finalize()
    return {
        "run_id": pipeline.run_id,
        "success": bool(summary["overall_success"]),
        "cache": result.metadata.get("cache"),
        "offered": sorted(pipeline.artifact_ids(result.output("datasets"))),
    }


AUTO_POLICY = CompactionPolicy(small_files=2)
"""What ``commit-auto`` writers compact by: a table of two small files is due."""


def commit(
    store: DeltaStore,
    barrier: Path,
    records: Records,
    staged: list[Path] | None,
    index: int | None = None,
) -> int:
    """Commit each step's bundle as its own wave, then its events; how many bundles it wrote.

    The last step waits until a racing writer has begun its first pass: however the processes
    are scheduled, that pass and this writer's commits interleave. With ``index``, this
    writer's own store compacts, and counts as such a writer once it has.
    """

    def racing() -> bool:
        if index is not None and store.compaction is not None and store.compaction.compactions:
            (barrier / f"maintaining-{index}").touch()
        return count(barrier, "maintaining-*") > 0

    written = 0
    for number, (execution, outputs, events) in enumerate(records):
        if number == len(records) - 1:
            wait_for(racing, "a racing writer to begin")
        bundle = store.stage_execution(execution) if staged is None else staged[number]
        written += store.commit_wave([bundle], step_outputs=outputs).committed
        store.record_events(events)
    return written


def until_done(barrier: Path, index: int, committers: int, once: Callable[[], T]) -> list[T]:
    """Call ``once()`` until every committer is done, and once more after: its results."""
    (barrier / f"maintaining-{index}").touch()
    results: list[T] = []
    while count(barrier, "committed-*") < committers:
        results.append(once())
        time.sleep(PASS_PAUSE_SECONDS)
    results.append(once())  # whatever the last commit left is seen by one pass at least
    return results


def maintain(role: str, root: str, barrier: Path, index: int, committers: int) -> dict[str, Any]:
    """Recover, vacuum or compact the root until the committers are done; what it did."""
    store = DeltaStore(root)
    if role == "recover":
        passes = until_done(barrier, index, committers, store.recover)
        done: dict[str, Any] = {"committed": sum(passes)}
    elif role == "vacuum":
        # an hour, the shortest retention vacuum_root accepts: what `stemma vacuum --apply` may do
        passes = until_done(
            barrier, index, committers, lambda: vacuum_root(root, apply=True, retain_hours=1)
        )
        done = {
            "removed": [str(r.path) for p in passes for r in p.removals],
            "log_entries": [str(r.path) for p in passes for r in p.log_entries],
        }
    elif role == "compact":
        passes = until_done(barrier, index, committers, lambda: compact_root(root))
        done = {"compacted": sum(c.files_before - c.files_after for p in passes for c in p)}
    else:
        raise SystemExit(f"unknown role {role!r}: pipeline, commit, commit-staged, recover, …")
    return done | {"passes_while_committing": len(passes) - 1}


def main(argv: list[str]) -> None:
    """Parse the command line (see the module docstring), wait for the go, and write."""
    role, root, barrier, index = argv[0], argv[1], Path(argv[2]), int(argv[3])
    store = DeltaStore(root, compact=AUTO_POLICY if role == "commit-auto" else None)
    records: Records = []
    staged: list[Path] | None = None
    if role in ("commit", "commit-staged", "commit-auto"):
        records = pickle.loads(Path(argv[4]).read_bytes())
    if role == "commit-staged":
        staged = [store.stage_execution(execution) for execution, _, _ in records]
    (barrier / f"ready-{index}").touch()
    wait_for((barrier / "go").exists, "the go")
    report: dict[str, Any] = {"role": role, "index": index}
    if role == "pipeline":
        report |= run_pipeline(root, barrier, index, seed=int(argv[4]), writers=int(argv[5]))
    elif role in ("commit", "commit-staged"):
        report["committed"] = commit(store, barrier, records, staged)
        (barrier / f"committed-{index}").touch()
    elif role == "commit-auto":
        report["committed"] = commit(store, barrier, records, None, index)
        (barrier / f"committed-{index}").touch()
        assert store.compaction is not None
        if not store.compaction.wait(DEADLINE_SECONDS):
            raise TimeoutError(f"the compaction was still running after {DEADLINE_SECONDS:.0f} s")
        made = store.compaction.compactions
        report["auto_compacted"] = sum(c.files_before - c.files_after for c in made)
        report["auto_tables"] = sorted({c.table for c in made})
    else:
        report |= maintain(role, root, barrier, index, committers=int(argv[4]))
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
