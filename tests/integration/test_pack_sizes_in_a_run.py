"""A step of an operation that ran earlier in the run starts at the pack size that step reached.

Sized packs start at one unit and grow as they come back (``dispatch.pack_sizing``): for a
step of quick units that climb (1, 8, 64, …) is a round trip per doubling. A second step of the
same operation in the same run knows the pace already and starts where the first one ended.
Bundles are counted on the SQLite store, which records every committed bundle with its step.
"""

import contextlib
import pathlib
import sqlite3
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
from worker_modules_probe import DryModulesSeen, ModulesSeen

from stemma.core.engine.references import StepResult
from stemma.core.front.pipeline import Pipeline

UNITS = 200


def _bundles_per_step(root: pathlib.Path) -> dict[str, int]:
    query = "SELECT step_dir, count(*) FROM committed_bundles GROUP BY step_dir"
    with contextlib.closing(sqlite3.connect(root / "core.sqlite")) as connection:
        return {str(step): int(count) for step, count in connection.execute(query).fetchall()}


def test_a_second_step_of_an_operation_starts_at_the_pack_size_the_first_one_reached(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEMMA_STORE", "sqlite")
    root = tmp_path / "root"
    pipeline = Pipeline.create("paced", root=root, max_workers=2)
    results: list[StepResult] = []
    for pad in (0, 1):  # (other contents: the second step's units are not cache hits)
        made = pipeline.run(ModulesSeen, params={"count": UNITS, "pad": pad})
        results.append(
            pipeline.run(
                DryModulesSeen,
                inputs={"items": made.output("seen")},
                execution={"artifacts_per_unit": 1},
            )
        )
    assert pipeline.finalize()["overall_success"] is True
    assert [r.succeeded_count for r in results] == [UNITS, UNITS]
    assert [r.cached_count for r in results] == [0, 0]

    bundles = _bundles_per_step(root)
    first, second = (bundles[f"{r.step_number}_test.dry_modules_seen"] for r in results)
    # The first climbs from one unit a pack; the second starts at the size it climbed to.
    assert first >= 4, bundles
    assert second < first, bundles
