"""Budget: a step's commit of 100,000 small artifacts at 100,000 artifacts/s (benchmarks/README.md).

Stages 1,000 units of 100 small metric artifacts each (as workers would; not timed), then times
``DeltaStore.commit_wave`` of the whole wave on a fresh root, and prints artifacts/s. Two
layouts: one bundle per unit (``units_per_worker=1``), and one bundle per worker pack of
``PACK`` units (what workers stage with ``units_per_worker=PACK``). A second, smaller wave
measures a commit against tables that already hold the first.
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from harness import load, spread, write_results

from stemma.core.execution_records import ExecutionRecord, StepOutputs
from stemma.core.operations.drafts import FinalizedArtifact, MetricDraft
from stemma.storage import DeltaStore

BUNDLES = 1_000
PER_BUNDLE = 100
ROUNDS = 3
PACK = 10
_T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _records(offset: int, bundles: int) -> list[ExecutionRecord]:
    records: list[ExecutionRecord] = []
    for unit in range(bundles):
        artifacts: list[FinalizedArtifact] = [
            MetricDraft.draft(
                {"unit": offset + unit, "i": i, "score": i / 7}, f"u{unit}_{i}.json", step_number=1
            ).finalize()
            for i in range(PER_BUNDLE)
        ]
        records.append(
            ExecutionRecord(
                execution_run_id=uuid.uuid4().hex,
                execution_spec_id=uuid.uuid4().hex,
                step_run_id="bench-run",
                step_spec_id="bench-spec",
                step_name="bench",
                step_number=1,
                operation="Bench",
                version="v0",
                params={},
                overrides={},
                started_at=_T0,
                ended_at=_T0,
                worker="localhost:1",
                backend="local",
                success=True,
                inputs={"data": (uuid.uuid4().hex,)},
                outputs={"out": tuple(a.artifact_id for a in artifacts)},
                artifacts=tuple(artifacts),
            )
        )
    return records


def _stage(store: DeltaStore, records: list[ExecutionRecord], pack: int) -> list[Path]:
    return [store.stage_executions(records[i : i + pack]) for i in range(0, len(records), pack)]


def _round(root: Path, pack: int) -> tuple[float, float, float]:
    store = DeltaStore(root)
    records = _records(0, BUNDLES)
    start = time.perf_counter()
    bundles = _stage(store, records, pack)
    staged = time.perf_counter() - start
    ids = tuple(sorted(a.artifact_id for r in records for a in r.artifacts))
    outputs = StepOutputs(step_run_id="bench-run", outputs={"out": ids})
    start = time.perf_counter()
    assert store.commit_wave(bundles, step_outputs=outputs).committed == len(bundles)
    fresh = time.perf_counter() - start
    more = _stage(store, _records(BUNDLES, BUNDLES // 10), pack)
    start = time.perf_counter()
    store.commit_wave(more)
    again = time.perf_counter() - start
    return staged, fresh, again


def main() -> dict[str, object]:
    """Both layouts; writes ``results/commit.json``; returns the packed one's figures."""
    rows = [measure(1), measure(PACK)]
    write_results(
        "commit",
        config={"units": BUNDLES, "artifacts_per_unit": PER_BUNDLE, "rounds": ROUNDS},
        rows=rows,
    )
    return rows[-1]


def measure(pack: int) -> dict[str, object]:
    """Print artifacts/s of a 100,000-artifact wave commit (median of rounds); return figures."""
    results: list[tuple[float, float, float]] = []
    for _ in range(ROUNDS):
        with tempfile.TemporaryDirectory() as tmp:
            results.append(_round(Path(tmp) / "root", pack))
    staged = statistics.median(r[0] for r in results)
    fresh = statistics.median(r[1] for r in results)
    again = statistics.median(r[2] for r in results)
    total = BUNDLES * PER_BUNDLE
    figures: dict[str, object] = {
        "units_per_bundle": pack,
        "bundles": BUNDLES // pack,
        "artifacts": total,
        "commit_seconds_spread": spread([r[1] for r in results]),
        "budget_artifacts_per_second": 100_000,
        "met": total / fresh >= 100_000,
        "load": load(),
        "commit_seconds": fresh,
        "artifacts_per_second": total / fresh,
        "second_wave_artifacts_per_second": total / 10 / again,
        "staging_seconds_all_workers": staged,
    }
    print(
        f"commit of {total:,} metric artifacts from {BUNDLES:,} units in "
        f"{BUNDLES // pack:,} bundles: {fresh:.2f} s "
        f"({total / fresh:,.0f} artifacts/s); a 10,000-artifact wave onto those tables: "
        f"{again:.2f} s ({total / 10 / again:,.0f} artifacts/s); staging (serial, untimed "
        f"budget): {staged:.2f} s   [{load()}]",
        file=sys.stdout,
    )
    return figures


if __name__ == "__main__":
    main()
