"""Compaction and vacuum against real Delta tables built by real commits."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline
from stemma.core.live import RunStatus, read_state
from stemma.core.store.locations import RootLayout
from stemma.storage import DeltaStore, artifacts, commit_staged, lineage, steps
from stemma.storage.locks import table_lock_path
from stemma.storage.maintenance import (
    LiveRunError,
    MaintenanceError,
    compact_root,
    delta_tables,
    table_lock,
    vacuum_root,
)
from stemma.storage.schemas import BY_NAME

from .conftest import FunctionStepFactory, commit_function_step, read_delta

_HOURS_AGO_3 = time.time() - 3 * 3600


def _busy_root(store: DeltaStore, make_step: FunctionStepFactory) -> str:
    """Six chained steps, each committed on its own: several small files per table."""
    previous: str | None = None
    for number in range(6):
        inputs = {"data": (previous,)} if previous is not None else {}
        step = make_step(f"step{number}", value=number, inputs=inputs)
        commit_function_step(store, step)
        previous = step.output.artifact_id
    assert previous is not None
    return previous


def _data_files(table: Path) -> set[Path]:
    return {p for p in table.rglob("*.parquet") if "_delta_log" not in p.parts}


def _all_files(layout: RootLayout) -> dict[str, set[Path]]:
    return {name: _data_files(path) for name, path in delta_tables(layout)}


def _referenced(layout: RootLayout) -> set[Path]:
    """The data files the tables' newest versions reference."""
    return {
        Path(uri.removeprefix("file://"))
        for _, path in delta_tables(layout)
        for uri in DeltaTable(str(path)).file_uris()
    }


def _contents(layout: RootLayout) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows, sorted: what a reader of the newest version sees."""
    return {name: sorted(read_delta(path).rows(), key=repr) for name, path in delta_tables(layout)}


def _queries(root: Path, last: str) -> tuple[object, ...]:
    return (
        sorted(artifacts(root).get_column("artifact_id").to_list()),
        sorted(lineage(root, last, "up").rows(), key=repr),
        sorted(steps(root).select("step_name", "status").rows()),
    )


def _age(path: Path, when: float = _HOURS_AGO_3) -> Path:
    inside: list[Path] = list(path.rglob("*")) if path.is_dir() else []
    for inner in [path, *inside]:
        os.utime(inner, (when, when))
    return path


def test_compact_root_fewer_files_same_rows_and_query_results(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    last = _busy_root(store, make_step)
    layout = store.layout
    rows, answers = _contents(layout), _queries(layout.root, last)
    before = {name: len(files) for name, files in _all_files(layout).items()}

    done = compact_root(layout.root)

    assert {c.table: c.files_before for c in done} == before
    assert any(c.files_before > 1 for c in done)
    assert all(c.files_after == 1 for c in done)
    assert _contents(layout) == rows
    assert _queries(layout.root, last) == answers
    for _, path in delta_tables(layout):
        assert list((path / "_delta_log").glob("*.checkpoint.parquet")), path
    # the replaced files are still on disk, only marked removed
    assert sum(len(files) for files in _all_files(layout).values()) > len(_referenced(layout))


def test_vacuum_root_dry_run_by_default_removes_nothing(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    _busy_root(store, make_step)
    compact_root(store.layout.root)
    on_disk = _all_files(store.layout)

    report = vacuum_root(store.layout.root, retain_hours=0, min_retain_hours=0)

    assert not report.applied
    assert report.removals
    assert report.bytes > 0
    assert all(Path(removal.path).exists() for removal in report.removals)
    assert _all_files(store.layout) == on_disk


def test_vacuum_root_apply_removes_exactly_the_replaced_files_and_keeps_every_row(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    last = _busy_root(store, make_step)
    layout = store.layout
    before = _all_files(layout)
    compact_root(layout.root)
    rows, answers = _contents(layout), _queries(layout.root, last)
    replaced = {path for files in before.values() for path in files} - _referenced(layout)
    assert replaced
    sizes = sum(path.stat().st_size for path in replaced)

    report = vacuum_root(layout.root, retain_hours=0, min_retain_hours=0, apply=True)

    assert report.applied
    assert {removal.path for removal in report.removals} == replaced
    assert report.bytes == sizes
    assert not any(path.exists() for path in replaced)
    assert _contents(layout) == rows
    assert _queries(layout.root, last) == answers


def test_a_second_vacuum_reports_no_file_the_first_removed_and_commits_nothing(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    # delta-rs lists every expired removal whether its file is there or not: the second pass
    # once reported the first's files again (0 bytes) and wrote two vacuum commits per table.
    _busy_root(store, make_step)
    layout = store.layout
    compact_root(layout.root)
    first = vacuum_root(layout.root, retain_hours=0, min_retain_hours=0, apply=True)
    assert [r for r in first.removals if r.kind.startswith("table ")]
    versions = {name: DeltaTable(str(path)).version() for name, path in delta_tables(layout)}

    again = vacuum_root(layout.root, retain_hours=0, min_retain_hours=0, apply=True)

    assert not [r for r in again.removals if r.kind.startswith("table ")]
    assert {name: DeltaTable(str(path)).version() for name, path in delta_tables(layout)} == (
        versions
    )


def test_commits_stay_idempotent_after_compaction_and_vacuum(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    waved = make_step("again", value=7)
    commit_function_step(store, waved)
    alone = make_step("recovered", value=8)
    assert commit_staged(store.layout, store.stage_execution(alone.execution)) is True
    _busy_root(store, make_step)
    compact_root(store.layout.root)
    vacuum_root(store.layout.root, retain_hours=0, min_retain_hours=0, apply=True)
    rows = _contents(store.layout)

    # Retried commits of what is already committed, each the way it was first committed: the
    # same bundles staged again make the same wave, and a bundle recovery commits alone keeps
    # its own transaction.
    again = store.stage_execution(waved.execution)
    assert store.commit_wave([again], step_outputs=waved.step_outputs).committed == 0
    assert commit_staged(store.layout, store.stage_execution(alone.execution)) is False

    assert _contents(store.layout) == rows


def test_vacuum_root_keeps_everything_younger_than_the_retention(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    _busy_root(store, make_step)
    layout = store.layout
    compact_root(layout.root)  # its replaced files were removed just now: too young to go
    table = layout.delta / "artifacts" / "index"
    old_orphan = table / "part-old-orphan.parquet"
    old_orphan.write_bytes(b"left by a commit that lost a conflict")
    _age(old_orphan)
    young_orphan = table / "part-young-orphan.parquet"
    young_orphan.write_bytes(b"being written for a commit in flight")
    old_sandbox = layout.working / "1_copy" / "ab" / "cd" / "abcd1234"
    young_sandbox = layout.working / "1_copy" / "ef" / "01" / "ef012345"
    old_bundle = layout.staging / ".quarantine" / "1_copy" / "abcd1234"
    old_log = layout.logs / "failures" / "step_1_copy" / "abcd1234.log"
    young_log = layout.logs / "failures" / "step_1_copy" / "ef012345.log"
    for folder in (old_sandbox, young_sandbox, old_bundle):
        (folder / "execute").mkdir(parents=True)
        (folder / "execute" / "out.txt").write_text("12345")
    old_log.parent.mkdir(parents=True)
    for log in (old_log, young_log):
        log.write_text("traceback")
    for path in (old_sandbox, old_bundle, old_log):
        _age(path)
    on_disk = _all_files(layout)

    report = vacuum_root(layout.root, retain_hours=2, apply=True)

    removed = {(removal.kind, removal.path) for removal in report.removals}
    assert removed == {
        ("table artifacts/index", old_orphan),
        ("working", old_sandbox),
        ("quarantine", old_bundle),
        ("logs", old_log),
    }
    assert report.bytes == len(b"left by a commit that lost a conflict") + 5 + 5 + len("traceback")
    on_disk["artifacts/index"].discard(old_orphan)
    assert _all_files(layout) == on_disk
    assert all(path.exists() for path in (young_orphan, young_sandbox, young_log))
    assert not old_sandbox.parent.exists()  # emptied parents go too
    assert layout.working.is_dir()


def test_vacuum_root_refuses_a_retention_below_the_minimum(tmp_path: Path) -> None:
    with pytest.raises(MaintenanceError, match=r"retain_hours, --retain-hours.*give 1 or more"):
        vacuum_root(tmp_path, retain_hours=0)


def _slow_step_running(root: Path, run_id: str) -> bool:
    states = read_state(root, run_id).steps
    return len(states) > 1 and states[1].running > 0


def test_vacuum_root_refuses_while_a_run_is_live_unless_forced(tmp_path: Path) -> None:
    pipeline = Pipeline.create("live", root=tmp_path, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 3})
    copied = pipeline.submit(
        SlowCopy, inputs={"dataset": generated.output("datasets")}, params={"seconds": 60.0}
    )
    layout = RootLayout(tmp_path)
    deadline = time.monotonic() + 120
    # a unit counts as running once handed to the pool; its sandbox comes a moment later
    while not (
        _slow_step_running(tmp_path, pipeline.run_id) and list(layout.working.rglob("execute"))
    ):
        assert time.monotonic() < deadline, "the slow step never started"
        time.sleep(0.02)
    sandboxes = sorted(layout.working.rglob("execute"))
    try:
        assert read_state(tmp_path, pipeline.run_id).status is RunStatus.RUNNING
        with pytest.raises(LiveRunError, match=rf"run {pipeline.run_id} is live.*--force"):
            vacuum_root(tmp_path, retain_hours=1, apply=True)
        cli = subprocess.run(
            [sys.executable, "-m", "stemma.core.cli.main", "vacuum", str(tmp_path), "--apply"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert cli.returncode == 2, cli.stderr
        assert f"run {pipeline.run_id} is live" in cli.stderr
        for sandbox in sandboxes:
            _age(sandbox.parent)  # even an old-looking sandbox of a live run is left alone
        live_log = layout.logs / "slurm" / pipeline.run_id / "1_0_log.out"
        ended_log = layout.logs / "slurm" / "ended_20260101_000000_abcdef01" / "1_0_log.out"
        for log in (live_log, ended_log):
            log.parent.mkdir(parents=True)
            _age(log.parent)
            log.write_text("elements' output")
            _age(log)
        forced = vacuum_root(tmp_path, retain_hours=1, apply=True, force=True)
        assert not [r for r in forced.removals if r.kind == "working"]
        assert all(sandbox.exists() for sandbox in sandboxes)
        assert live_log.exists()
        assert ("logs", ended_log) in {(r.kind, r.path) for r in forced.removals}
        assert not ended_log.exists()
    finally:
        pipeline.cancel(2)  # force: the running copy is terminated, not waited for
        copied.result()
        pipeline.finalize()


def test_stemma_compact_and_vacuum_commands_report_what_they_did(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    _busy_root(store, make_step)
    root = store.layout.root
    orphan = store.layout.delta / "orchestration" / "steps" / "part-orphan.parquet"
    orphan.write_bytes(b"x" * 100)
    _age(orphan)

    def stemma(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "stemma.core.cli.main", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "data files ->" in stemma("compact", str(root))
    dry = stemma("vacuum", str(root), "--retain-hours", "2")
    assert f"would remove table orchestration/steps: {orphan} (100 bytes)" in dry
    assert "add --apply to delete" in dry
    assert orphan.exists()
    applied = stemma("vacuum", "--root", str(root), "--retain-hours", "2", "--apply")
    assert f"removed table orchestration/steps: {orphan} (100 bytes)" in applied
    assert "removed 1 table older than 2 h: 100 B (100 bytes)" in applied
    assert not orphan.exists()


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_table_lock_is_the_lock_every_stemma_append_holds(tmp_path: Path, name: str) -> None:
    layout = RootLayout(tmp_path)
    assert table_lock(layout, name).path == table_lock_path(layout, BY_NAME[name])
