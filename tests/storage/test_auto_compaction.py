"""The compaction a DeltaStore runs after its commits, against real tables built by real commits.

Each table of the root gets one small file per commit; once a table holds the policy's number
of small files the store compacts it in the background, under the table's lock, without
changing a row and without removing a file from disk.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from stemma.core.file_lock import FileLock
from stemma.storage import DeltaStore
from stemma.storage.compaction_policy import (
    COMPACT_ENV,
    DEFAULT_SMALL_FILES_IN_BUCKET,
    SMALL_FILES_ENV,
    CompactionPolicy,
    TableFiles,
    compaction_policy,
    due,
    small_count,
)
from stemma.storage.lock_waits import acquire_within
from stemma.storage.maintenance import delta_tables, table_lock

from .conftest import build_function_step, commit_function_step, read_delta

WAIT_SECONDS = 60.0
"""The longest a test waits for the background compaction (it takes well under a second)."""


def _tables(store: DeltaStore) -> dict[str, Any]:
    """Every table's rows, as sorted JSON lines (order is not part of a table's content)."""
    return {
        name: sorted(
            json.dumps(row, sort_keys=True, default=str) for row in frame.iter_rows(named=True)
        )
        for name, frame in ((n, read_delta(p)) for n, p in delta_tables(store.layout))
    }


def _files(store: DeltaStore) -> dict[str, int]:
    """How many data files each table's newest version references."""
    return {name: len(DeltaTable(str(p)).file_uris()) for name, p in delta_tables(store.layout)}


def _on_disk(store: DeltaStore) -> set[Path]:
    return set(store.layout.delta.rglob("*.parquet")) - set(
        store.layout.delta.rglob("_delta_log/*")
    )


def _operations(store: DeltaStore, name: str) -> list[str]:
    """The operation of each commit in a table's log, oldest first."""
    found: list[str] = []
    for entry in sorted((store.layout.delta / name / "_delta_log").glob("*.json")):
        for line in entry.read_text().splitlines():
            action: dict[str, Any] = json.loads(line)
            if "commitInfo" in action:
                found.append(str(action["commitInfo"].get("operation")))
    return found


def _commit_steps(store: DeltaStore, count: int, prefix: str = "step") -> None:
    for number in range(count):
        commit_function_step(store, build_function_step(f"{prefix}_{number}", value=number))


# ---------------------------------------------------------------- the policy, no tables


def test_policy_is_on_by_default_and_off_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(COMPACT_ENV, raising=False)
    monkeypatch.delenv(SMALL_FILES_ENV, raising=False)
    assert compaction_policy(None) == CompactionPolicy()
    assert compaction_policy(True) == CompactionPolicy()
    assert compaction_policy(False) is None
    given = CompactionPolicy(small_files=7)
    assert compaction_policy(given) is given
    monkeypatch.setenv(COMPACT_ENV, "off")
    assert compaction_policy(None) is None
    assert compaction_policy(True) == CompactionPolicy()  # an argument wins over the variable
    monkeypatch.setenv(COMPACT_ENV, "on")
    monkeypatch.setenv(SMALL_FILES_ENV, "12")
    assert compaction_policy(None) == CompactionPolicy(small_files=12)


def test_a_root_in_a_bucket_compacts_at_fewer_small_files_unless_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(COMPACT_ENV, raising=False)
    monkeypatch.delenv(SMALL_FILES_ENV, raising=False)
    in_bucket = compaction_policy(None, in_bucket=True)
    assert in_bucket == CompactionPolicy(small_files=DEFAULT_SMALL_FILES_IN_BUCKET)
    assert in_bucket is not None
    assert in_bucket.small_files < CompactionPolicy().small_files
    given = CompactionPolicy(small_files=500)
    assert compaction_policy(given, in_bucket=True) is given  # a policy given rules
    monkeypatch.setenv(SMALL_FILES_ENV, "40")
    assert compaction_policy(None, in_bucket=True) == CompactionPolicy(small_files=40)
    monkeypatch.setenv(COMPACT_ENV, "off")
    assert compaction_policy(None, in_bucket=True) is None


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        (COMPACT_ENV, "sometimes", "STEMMA_COMPACT='sometimes'"),
        (SMALL_FILES_ENV, "1", "STEMMA_COMPACT_SMALL_FILES='1'"),
        (SMALL_FILES_ENV, "many", "STEMMA_COMPACT_SMALL_FILES='many'"),
    ],
)
def test_a_bad_compaction_variable_stops_the_store_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, named: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=named):
        DeltaStore(tmp_path / "root")


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"small_files": 1}, "small_files=1"),
        ({"small_file_bytes": 0}, "small_file_bytes=0"),
        ({"small_file_bytes": 10, "target_bytes": 5}, "target_bytes=5"),
        ({"budget_seconds": -1.0}, "budget_seconds=-1.0"),
    ],
)
def test_a_policy_out_of_range_names_its_field(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        CompactionPolicy(**fields)


def test_due_tables_come_most_small_files_first_and_what_a_compaction_left_is_discounted() -> None:
    policy = CompactionPolicy(small_files=10, small_file_bytes=100)
    assert small_count([99, 100, 5, None, 2_000], policy) == 2
    found = [
        TableFiles(name="a", small=10, files=10),
        TableFiles(name="b", small=30, files=31),
        TableFiles(name="c", small=9, files=9),
        TableFiles(name="d", small=12, files=12),
    ]
    assert [t.name for t in due(found, policy, {})] == ["b", "d", "a"]
    # d's last compaction left 3 files it could not merge: it is due at 13, not at 10
    assert [t.name for t in due(found, policy, {"d": 3})] == ["b", "a"]
    assert policy.count_every == 2
    assert CompactionPolicy(small_files=3).count_every == 1


# ---------------------------------------------------------------- real commits


def test_tables_past_the_threshold_are_compacted_keeping_every_row_and_file(
    tmp_path: Path,
) -> None:
    store = DeltaStore(tmp_path / "root", compact=CompactionPolicy(small_files=4))
    assert store.compaction is not None
    _commit_steps(store, 3)
    assert store.compaction.wait(WAIT_SECONDS)
    assert store.compaction.compactions == ()  # three files a table: none is due yet
    rows, files = _tables(store), _on_disk(store)

    _commit_steps(store, 1, prefix="fourth")
    assert store.compaction.wait(WAIT_SECONDS)

    made = {c.table: c for c in store.compaction.compactions}
    # (the steps table gets the fourth step's events after the wave: its pass may not see them)
    expected = {"artifacts/index", "artifacts/file_refs", "orchestration/executions"}
    assert expected <= set(made), made
    counts = _files(store)
    for name in made:
        assert counts[name] == 1, f"{name}: {counts[name]} files after compaction"
        assert made[name].files_after == 1
        assert _operations(store, name)[-1] == "OPTIMIZE"
    after = _tables(store)
    assert len(after["orchestration/executions"]) == 4
    # the rows are the fourth step's more, nothing else changed; no file left the disk
    for name, before in rows.items():
        assert set(before) <= set(after[name]), f"{name} lost rows"
        assert len(after[name]) == len(set(after[name])), f"{name} repeats a row"
    assert files <= _on_disk(store)


def test_compact_false_leaves_every_small_file(tmp_path: Path) -> None:
    store = DeltaStore(tmp_path / "root", compact=False)
    assert store.compaction is None
    _commit_steps(store, 5)
    assert _files(store)["orchestration/executions"] == 5
    assert all(op != "OPTIMIZE" for op in _operations(store, "orchestration/executions"))


def test_stemma_compact_off_in_the_environment_turns_it_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(COMPACT_ENV, "off")
    assert DeltaStore(tmp_path / "root").compaction is None
    monkeypatch.setenv(COMPACT_ENV, "on")
    monkeypatch.setenv(SMALL_FILES_ENV, "2")
    store = DeltaStore(tmp_path / "root")
    assert store.compaction is not None
    assert store.compaction.policy.small_files == 2


def test_a_commit_returns_while_its_compaction_waits_for_a_table_lock(tmp_path: Path) -> None:
    """The wave is back while the compaction it started is still held up; it finishes after."""
    policy = CompactionPolicy(small_files=2, budget_seconds=WAIT_SECONDS)
    store = DeltaStore(tmp_path / "root", compact=policy)
    assert store.compaction is not None
    first, second = build_function_step("first"), build_function_step("second")
    commit_function_step(store, first)
    assert store.compaction.wait(WAIT_SECONDS)
    store.record_events([second.running, second.final])  # the steps table: 4 small files
    held = table_lock(store.layout, "orchestration/steps")
    held.acquire()
    try:
        # a wave that does not write the steps table: it commits; its pass waits for the lock
        store.commit_wave(
            [store.stage_execution(second.execution)], step_outputs=second.step_outputs
        )
        assert not store.compaction.wait(0.2), "the wave waited for its compaction"
        assert "orchestration/steps" not in {c.table for c in store.compaction.compactions}
    finally:
        held.release()
    assert store.compaction.wait(WAIT_SECONDS)
    assert "orchestration/steps" in {c.table for c in store.compaction.compactions}
    assert _files(store)["orchestration/steps"] == 1


def test_a_pickled_store_runs_its_own_compactions(tmp_path: Path) -> None:
    store = DeltaStore(tmp_path / "root", compact=CompactionPolicy(small_files=3))
    copy = pickle.loads(pickle.dumps(store))
    assert copy.compaction is not None
    assert copy.compaction is not store.compaction
    assert copy.compaction.policy == CompactionPolicy(small_files=3)


def test_a_lock_wait_given_up_leaves_the_lock_free_once_its_holder_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "table.lock"
    held = FileLock(path)
    held.acquire()
    waiting = FileLock(path)
    assert not acquire_within(waiting, 0.1)  # the holder keeps it past the deadline
    held.release()
    # the abandoned wait gets the lock when it is let go, and lets go of it at once
    again = FileLock(path)
    assert again.acquire(timeout=WAIT_SECONDS)
    again.release()
    taken = FileLock(path)
    assert acquire_within(taken, WAIT_SECONDS)
    assert not FileLock(path).acquire(timeout=0)  # held by the wait that succeeded
    taken.release()


_ENDS_WHILE_ITS_COMPACTION_WAITS = """
import sys
from pathlib import Path
from stemma.storage import AutoCompaction, CompactionPolicy, DeltaStore
from stemma.storage.maintenance import delta_tables, table_lock
from tests.storage.conftest import build_function_step, commit_function_step

store = DeltaStore(Path(sys.argv[1]), compact=False)
for number in range(2):  # two small files a table
    commit_function_step(store, build_function_step(f"step_{number}", value=number))
for name, _ in delta_tables(store.layout):  # held as a long commit would hold them, to the end
    table_lock(store.layout, name).acquire()
policy = CompactionPolicy(small_files=2, budget_seconds=600)  # a lock waited for up to 10 min
compaction = AutoCompaction(store.layout, policy)
compaction.after_commit()  # due: its pass waits for the first table's lock
print("done", compaction.wait(0.5), flush=True)
"""


def test_a_script_ends_without_waiting_for_a_lock_its_compaction_wants(tmp_path: Path) -> None:
    """Its compaction waits for a table's lock; the script's end gives the wait up, not 600 s."""
    checkout = Path(__file__).resolve().parents[2]
    path = os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))
    ended = subprocess.run(
        [sys.executable, "-c", _ENDS_WHILE_ITS_COMPACTION_WAITS, str(tmp_path / "root")],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS * 2,
        check=False,
    )
    assert ended.returncode == 0, ended.stderr[-3000:]
    assert ended.stdout.strip() == "done False"  # still waiting when the script ended
