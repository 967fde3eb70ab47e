"""A worker that dies mid-unit: its unit becomes a failure record, and nothing else suffers."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
from fault_operations import DieOnMatch

from stemma.core.examples import DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline


def _failure_logs(root: pathlib.Path) -> list[str]:
    return [path.read_text() for path in sorted((root / "logs" / "failures").rglob("*.log"))]


def test_a_sigkilled_worker_fails_only_its_own_unit_and_the_step_goes_on(
    tmp_path: pathlib.Path,
) -> None:
    pipeline = Pipeline.create("worker-dies", root=tmp_path, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 6, "rows": 3})
    dying = pipeline.run(
        DieOnMatch, inputs={"dataset": generated.output("datasets")}, params={"match": "_2."}
    )
    after = pipeline.run(Transform, inputs={"dataset": dying.output("dataset")})
    pipeline.finalize()
    assert (dying.succeeded_count, dying.failed_count) == (5, 1)  # neighbours were run again
    assert dying.metadata["status"] == "completed"  # under `continue`
    assert after.succeeded_count == 5
    logs = _failure_logs(tmp_path)
    assert len(logs) == 1
    assert "killed by SIGKILL" in logs[0]


def test_a_worker_dying_in_a_pack_of_quick_units_fails_only_its_own_unit(
    tmp_path: pathlib.Path,
) -> None:
    # Quick units share packs (units_per_worker left unset); a pack whose worker dies is sent
    # again one unit per pack, so the neighbours succeed and only the killer fails.
    pipeline = Pipeline.create("pack-dies", root=tmp_path / "root", max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 40, "rows": 3})
    deaths = tmp_path / "deaths"
    dying = pipeline.run(
        DieOnMatch,
        inputs={"dataset": generated.output("datasets")},
        params={"match": "_29.", "pause": 0, "deaths": str(deaths)},
    )
    pipeline.finalize()
    assert (dying.succeeded_count, dying.failed_count) == (39, 1)
    assert dying.metadata["status"] == "completed"
    # It died in a pack with others, then alone (a pack of one is not sent again; the pool may
    # also rerun a pack it could not yet blame, so "at least").
    assert len(deaths.read_text().splitlines()) >= 2
    assert len(_failure_logs(tmp_path / "root")) == 1
