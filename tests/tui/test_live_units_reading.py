"""How a running step's staged units are read: each bundle once, folders listed when changed."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import uuid
from pathlib import Path

import polars as pl

from stemma.core.store.failure_logs import failure_log_path
from stemma.storage.schemas import EXECUTIONS
from stemma.tui.client.dir_tree import DirTree
from stemma.tui.client.live_executions import LiveExecutions

NOW = dt.datetime.now(dt.UTC)
STEP_RUN = "step-run-1"


def _stage(
    root: Path, *, step_run_id: str = STEP_RUN, success: bool = True, execution: str = ""
) -> Path:
    """A Delta bundle of one unit of step 1 ("copy"), its sentinel holding its row."""
    execution = execution or uuid.uuid4().hex
    row: dict[str, object] = {column: None for column in EXECUTIONS.columns}
    row.update(
        execution_run_id=execution,
        execution_spec_id="spec",
        step_run_id=step_run_id,
        step_spec_id="step-spec",
        step_name="copy",
        step_number=1,
        started_at=NOW,
        ended_at=NOW + dt.timedelta(seconds=2),
        success=success,
        worker="node-a:1",
        error=None if success else "ValueError: no",
    )
    bundle = root / "staging" / "1_copy" / execution[:2] / execution[2:4] / execution
    bundle.mkdir(parents=True)
    frame = pl.DataFrame([row], schema=EXECUTIONS.polars_schema)
    frame.write_parquet(bundle / "executions.parquet")
    return bundle


def _age(folder: Path) -> None:
    """Make every folder below ``folder`` look changed a minute ago."""
    old = NOW.timestamp() - 60
    for path in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        os.utime(path, (old, old))


def _rows(live: LiveExecutions) -> list[str]:
    rows = live.rows(since=NOW - dt.timedelta(minutes=1), step_run_id=STEP_RUN)
    return sorted(e.execution_run_id for e in rows)


def test_each_staged_bundle_is_read_once_and_its_unit_stays_listed_once_committed(
    tmp_path: Path,
) -> None:
    bundles = [_stage(tmp_path), _stage(tmp_path), _stage(tmp_path, success=False)]
    _stage(tmp_path, step_run_id="an earlier run's leftover")
    live = LiveExecutions(tmp_path, number=1, name="copy", operation="op")
    first = _rows(live)
    assert first == sorted(b.name for b in bundles)
    assert live.bundles_read == 4
    newer = _stage(tmp_path)
    assert _rows(live) == sorted([*first, newer.name])
    assert live.bundles_read == 5  # only the new one read
    shutil.rmtree(bundles[0])  # the step's commit took it away: the unit is still shown
    assert _rows(live) == sorted([*first, newer.name])
    rows = live.rows(since=NOW - dt.timedelta(minutes=1), step_run_id=STEP_RUN)
    assert {e.stage for e in rows} == {"staged"}
    assert sorted(e.success is True for e in rows) == [False, True, True, True]


def test_a_folder_tree_lists_again_only_the_folders_that_changed(tmp_path: Path) -> None:
    for _ in range(20):
        _stage(tmp_path)
    step = tmp_path / "staging" / "1_copy"
    _age(step)
    tree = DirTree(step, 3)
    assert len(tree.leaves()) == 20
    listed = tree.listings
    assert len(tree.leaves()) == 20
    assert tree.listings == listed  # nothing changed: stat calls only
    added = _stage(tmp_path)
    assert str(added) in tree.leaves()
    assert tree.listings - listed <= 3  # the new bundle's folders, not the others


def test_a_failed_staged_unit_points_at_its_failure_log(tmp_path: Path) -> None:
    failed = _stage(tmp_path, success=False)
    log = failure_log_path(tmp_path, 1, "op", failed.name)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("ValueError: no\n")
    _stage(tmp_path)
    live = LiveExecutions(tmp_path, number=1, name="copy", operation="op")
    rows = live.rows(since=NOW - dt.timedelta(minutes=1), step_run_id=STEP_RUN)
    assert {e.execution_run_id: e.failure_log for e in rows if not e.success} == {failed.name: log}
    assert [e.failure_log for e in rows if e.success] == [None]


def test_a_unit_that_ended_before_the_rest_of_its_pack_stays_listed_until_it_is_staged(
    tmp_path: Path,
) -> None:
    live = LiveExecutions(tmp_path, number=1, name="copy", operation="op")
    units = [uuid.uuid4().hex for _ in range(2)]
    sandboxes = [tmp_path / "working" / "1_op" / u[:2] / u[2:4] / u for u in units]
    for sandbox in sandboxes:
        sandbox.mkdir(parents=True)
    assert _rows(live) == sorted(units)
    shutil.rmtree(sandboxes[0])  # the first unit ended; its pack's bundle is not staged yet
    rows = live.rows(since=NOW - dt.timedelta(minutes=1), step_run_id=STEP_RUN)
    assert sorted(e.execution_run_id for e in rows) == sorted(units)  # not one unit fewer
    assert {e.stage for e in rows} == {"running"}
    shutil.rmtree(sandboxes[1])
    _stage(tmp_path, execution=units[0])
    _stage(tmp_path, execution=units[1])  # the pack staged: each unit once, staged
    rows = live.rows(since=NOW - dt.timedelta(minutes=1), step_run_id=STEP_RUN)
    assert sorted(e.execution_run_id for e in rows) == sorted(units)
    assert {e.stage for e in rows} == {"staged"}
