"""Concurrency cases as a table, in delta-rs's style: writers by race, each with its outcome.

Every row starts its writers as separate processes on one real root
(``concurrency_writer.py``), holds them at a barrier until all are ready, and lets them race
(``race_harness.py``); then it checks the outcome the row states, and what holds after every
race: each table readable, no row written twice, nothing left staged.
docs/concepts/store.md ("Concurrency cases") is this table in words.

Every row runs twice: on a local root, and on an S3 root (``s3://{a new bucket}/root`` on the
local S3 server, ``scripts/object-stores.sh``), its writers processes of one machine: the
environment a user of that server sets, and one ``$STEMMA_STATE_DIR``, so one local half.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from stemma.storage import ARTIFACT_INDEX, EXECUTIONS, METRICS, STEPS, DeltaStore
from stemma.storage.maintenance import compact_root, delta_tables
from tests.roots_under_test import S3_ENDPOINT, S3_USER_ENV
from tests.storage.object_roots.conftest import make_bucket

from .conftest import FunctionStep, build_function_step, commit_function_step
from .race_harness import (
    Root,
    assert_sound,
    bucket_create,
    bucket_read,
    exists,
    ids,
    open_table,
    rows,
    table_files,
    table_places,
    tables,
)

_STEPS_PER_COMMITTER = 3


class Race(StrEnum):
    """What the writers of a row do to the root at the same moment."""

    SAME_KEY = "same execution key"
    DISJOINT_KEYS = "disjoint keys"
    RECOVERY = "recovery racing a commit"
    VACUUM = "vacuum racing a commit"
    COMPACTION = "compaction racing a commit"
    AUTO_COMPACTION = "automatic compaction racing commits"


@dataclass(frozen=True)
class Case:
    """One row of the table."""

    writers: int
    """Processes writing the root at once."""
    race: Race
    """What they do."""
    expected: str
    """The outcome, in words: the assertion message of every check of the row."""
    in_bucket: str = ""
    """The outcome on an S3 root, where it differs by design (else :attr:`expected`)."""

    def on(self, kind: str) -> Case:
        """The row as it runs on a root of ``kind`` (``local``, ``s3``)."""
        if kind == "local" or not self.in_bucket:
            return self
        return dataclasses.replace(self, expected=self.in_bucket)


CASES = [
    # writers, race, expected outcome
    Case(2, Race.SAME_KEY,
         "the unit runs once; the other Pipeline waits for the step's lease and finds it built: "
         "one execution row, each artifact indexed once, both runs offer the same ids"),
    Case(4, Race.SAME_KEY,
         "the unit runs once; the three other Pipelines wait and find it built: one execution "
         "row, each artifact indexed once, all four runs offer the same ids"),
    Case(2, Race.DISJOINT_KEYS,
         "both units run and commit: two execution rows, the file both wrote alike indexed "
         "once, each run's own file once"),
    Case(4, Race.DISJOINT_KEYS,
         "all four units run and commit: four execution rows, the file all wrote alike "
         "indexed once, each run's own file once"),
    Case(2, Race.RECOVERY,
         "one process commits the bundles it staged while the other recovers the root: each "
         "bundle, its own and a dead run's, committed exactly once and counted once"),
    Case(4, Race.RECOVERY,
         "two processes commit the bundles they staged while two recover the root: each "
         "bundle, theirs and a dead run's, committed exactly once and counted once"),
    Case(2, Race.VACUUM,
         "one process commits while the other vacuums (--apply, an hour's retention): every "
         "commit lands once, no committed row is lost, only the old files nothing references "
         "and the old log entries before each checkpoint are removed, every table still reads",
         in_bucket=(
         "one process commits while the other vacuums an S3 root (--apply, an hour's "
         "retention): every commit lands once, no committed row is lost, only the old files "
         "nothing references are removed (in each table a file its log removed three hours "
         "ago, and an old failure log in the local half); the old log entries before each "
         "checkpoint stay, a bucket's log being trimmed by delta-rs's log retention (vacuum "
         "reports none); every table still reads")),
    Case(4, Race.VACUUM,
         "three processes commit while the fourth vacuums: every commit lands once, no "
         "committed row is lost, only the old files nothing references and the old log "
         "entries before each checkpoint are removed, every table still reads",
         in_bucket=(
         "three processes commit while the fourth vacuums an S3 root: every commit lands "
         "once, no committed row is lost, only the old files nothing references are removed "
         "(in each table a file its log removed three hours ago, and an old failure log in "
         "the local half); the old log entries before each checkpoint stay, a bucket's log "
         "being trimmed by delta-rs's log retention (vacuum reports none); every table still "
         "reads")),
    Case(2, Race.COMPACTION,
         "one process commits while the other compacts every table, again and again: every "
         "commit lands once, no row is lost, the tables are compacted and still read"),
    Case(4, Race.COMPACTION,
         "three processes commit while the fourth compacts: every commit lands once, no row "
         "is lost, the tables are compacted and still read"),
    Case(2, Race.AUTO_COMPACTION,
         "both processes commit, each store compacting the tables after its commits (two "
         "small files make a table due) while the other commits: every commit lands once, no "
         "row is lost, no file a table references is removed, the tables are compacted and "
         "still read"),
    Case(4, Race.AUTO_COMPACTION,
         "four processes commit, each store compacting after its commits while the others "
         "commit: every commit lands once, no row is lost, no file a table references is "
         "removed, the tables are compacted and still read"),
]  # fmt: skip


# ---------------------------------------------------------------- the races


def race_pipelines(root: Root, case: Case) -> None:
    """N Pipelines run RaceGenerate at once: one seed for all (same key), or one each."""
    same = case.race is Race.SAME_KEY
    seeds = [0 if same else index for index in range(case.writers)]
    writers = [root.start("pipeline", i, seed, case.writers) for i, seed in enumerate(seeds)]
    reports = root.race(writers)
    found = assert_sound(root, case.expected)
    ran = (root.barrier / "ran").read_text().splitlines()
    executions = found[EXECUTIONS.name]
    index = found[ARTIFACT_INDEX.name]
    assert all(report["success"] for report in reports), case.expected
    units = 1 if same else case.writers
    assert len(ran) == units, f"{case.expected}: the unit ran {ran}"
    assert executions.height == units, case.expected
    assert executions.get_column("execution_spec_id").n_unique() == units, case.expected
    # RaceGenerate writes one file all seeds write alike, and one of the seed's own
    assert index.height == 1 + units, case.expected
    offered = [tuple(report["offered"]) for report in reports]
    if same:
        assert len(set(offered)) == 1, case.expected
        hits = sorted(str(report["cache"]) for report in reports)
        assert hits == ["None", *["step"] * (case.writers - 1)], case.expected
    else:
        common = set(offered[0]).intersection(*offered[1:])
        assert len(common) == 1, case.expected
        assert sorted({i for o in offered for i in o}) == ids(index, "artifact_id")


def _steps(prefix: str, count: int) -> list[FunctionStep]:
    # every step returns the same value, so the writers race on one metric artifact id
    return [build_function_step(f"{prefix}_{i}", value={"shared": True}) for i in range(count)]


def assert_every_commit_once(
    found: dict[str, pl.DataFrame], made: list[FunctionStep], case: Case, *, died: int = 0
) -> None:
    """Each step's execution row, its file ref and its two events once; one shared metric.

    The first ``died`` steps were staged by a run that died before it wrote their events.
    """
    executions = found[EXECUTIONS.name]
    assert ids(executions, "execution_run_id") == sorted(s.execution_run_id for s in made), (
        case.expected
    )
    events = found[STEPS.name]
    assert events.height == 2 * (len(made) - died), case.expected
    index = found[ARTIFACT_INDEX.name]
    assert index.height == len(made) + 1, case.expected
    assert found[METRICS.name].height == 1, case.expected


def assert_raced(reports: list[dict[str, Any]], case: Case) -> None:
    """Each recovering or maintaining writer made a pass before the committers were done."""
    racing = [r for r in reports if "passes_while_committing" in r]
    assert racing, case.expected
    assert all(r["passes_while_committing"] >= 1 for r in racing), f"{case.expected}: {racing}"


def race_recovery(root: Root, case: Case) -> None:
    """Half the writers commit bundles they staged; the other half recover the root meanwhile."""
    store = DeltaStore(root.given)
    dead = _steps("dead", 2)  # a run killed after staging: only recovery commits these
    for step in dead:
        store.stage_execution(step.execution)
    committers = case.writers // 2
    batches = [_steps(f"live{i}", _STEPS_PER_COMMITTER) for i in range(committers)]
    writers = [
        root.start("commit-staged", i, root.committer_records(i, batch))
        for i, batch in enumerate(batches)
    ]
    writers += [root.start("recover", i, committers) for i in range(committers, case.writers)]
    reports = root.race(writers)
    assert_raced(reports, case)
    made = [*dead, *(step for batch in batches for step in batch)]
    found = assert_sound(root, case.expected)
    assert_every_commit_once(found, made, case, died=len(dead))
    assert sum(report["committed"] for report in reports) == len(made), case.expected
    assert set(store.completed([s.fingerprint for s in made[len(dead) :]])) == {
        s.fingerprint for s in made[len(dead) :]
    }, case.expected
    offered = store.step_outputs([s.step_run_id for s in made[len(dead) :]])
    for step in made[len(dead) :]:
        expected = {role: ids for role, ids in step.step_outputs.outputs.items()}
        assert offered[step.step_run_id] == expected, case.expected


def _history(store: DeltaStore) -> list[FunctionStep]:
    """Steps committed before the race, then compacted: small files replaced by a large one."""
    made = _steps("before", 3)
    for step in made:
        commit_function_step(store, step)
    compact_root(store.layout.root)
    return made


@dataclass(frozen=True)
class Leftovers:
    """What a vacuum finds on the root before the race: where each file is, as it reports it."""

    removed: list[str]
    """The files it must remove."""
    log_entries: list[str]
    """The commit log entries it must remove."""
    kept: list[str]
    """Old files it must leave."""


def _old_leftovers(store: DeltaStore) -> tuple[list[Path], list[Path]]:
    """What a vacuum removes, three hours old: files, and each table's log before its checkpoint.

    The files: an orphan data file in each table (what a commit that lost a conflict leaves) and
    a failure log. The files compaction just replaced are younger than any retention a vacuum
    accepts, so they must stay.
    """
    three_hours_ago = time.time() - 3 * 3600
    old: list[Path] = []
    entries: list[Path] = []
    for _, path in delta_tables(store.layout):
        checkpoint = max(int(p.name.split(".")[0]) for p in path.glob("_delta_log/*.checkpoint.*"))
        entries += [e for e in path.glob("_delta_log/*.json") if int(e.stem) < checkpoint]
        orphan = path / "part-00000-orphan-of-a-lost-conflict.zstd.parquet"
        orphan.write_bytes(next(path.glob("*.parquet")).read_bytes())
        old.append(orphan)
    log = store.layout.logs / "failures" / "step_1_old" / "abcd1234.log"
    log.parent.mkdir(parents=True)
    log.write_text("Traceback: an old failure")
    old.append(log)
    assert entries, "the history left no log entry before a checkpoint: nothing to vacuum there"
    for path in (*old, *entries):
        os.utime(path, (three_hours_ago, three_hours_ago))
    return old, entries


def _old_leftovers_in_bucket(store: DeltaStore) -> Leftovers:
    """What a vacuum of a bucket root removes: in each table a file removed three hours ago.

    S3 dates an object when it is written, never earlier, so a file no commit references (the
    local root's orphan) cannot be made older than the retention there; a file the table's log
    removed can: its age is its removal's, which the removing commit states
    (``deletionTimestamp``). So each table gets a data file and a commit that removed it three
    hours ago, as a compaction then would have. An old failure log goes in the local half, as on
    a local root. The log entries before each checkpoint stay: on a bucket they are delta-rs's to
    trim, by the table's log retention.
    """
    three_hours_ago = time.time() - 3 * 3600
    removed: list[str] = []
    entries: list[str] = []
    for place in table_places(store.layout):
        log = {
            name.removeprefix("_delta_log/"): where
            for name, where in table_files(place, "_delta_log/").items()
        }
        checkpoint = max(int(name.split(".")[0]) for name in log if ".checkpoint." in name)
        entries += [where for name, where in log.items() if _entry_before(name, checkpoint)]
        data = bucket_read(place, next(n for n in table_files(place) if n.startswith("part-")))
        orphan = "part-00000-removed-three-hours-ago.zstd.parquet"
        removed.append(bucket_create(place, orphan, data))
        gone: dict[str, object] = {
            "path": orphan,
            "deletionTimestamp": int(three_hours_ago * 1000),
            "dataChange": True,
            "extendedFileMetadata": True,
            "partitionValues": {},
            "size": len(data),
        }
        info: dict[str, object] = {"timestamp": int(time.time() * 1000), "operation": "DELETE"}
        commit = f"{json.dumps({'commitInfo': info})}\n{json.dumps({'remove': gone})}\n"
        version = open_table(place).version() + 1
        bucket_create(place, f"_delta_log/{version:020}.json", commit.encode())
    log = store.layout.logs / "failures" / "step_1_old" / "abcd1234.log"
    log.parent.mkdir(parents=True)
    log.write_text("Traceback: an old failure")
    os.utime(log, (three_hours_ago, three_hours_ago))
    assert entries, "the history left no log entry before a checkpoint: none to keep there"
    return Leftovers(removed=[*removed, str(log)], log_entries=[], kept=entries)


def _entry_before(name: str, checkpoint: int) -> bool:
    """Whether ``name`` (in ``_delta_log/``) is a commit's entry before version ``checkpoint``."""
    stem, _, suffix = name.partition(".")
    return suffix == "json" and stem.isdigit() and int(stem) < checkpoint


def _leftovers(root: Root, store: DeltaStore) -> Leftovers:
    """What a vacuum of the root finds, three hours old, before the race."""
    if root.in_bucket:
        return _old_leftovers_in_bucket(store)
    old, entries = _old_leftovers(store)
    return Leftovers(removed=[*map(str, old)], log_entries=[*map(str, entries)], kept=[])


def race_maintenance(root: Root, case: Case) -> None:
    """All writers but one commit steps; the last vacuums or compacts the root meanwhile."""
    store = DeltaStore(root.given)
    before = _history(store)
    leftovers = _leftovers(root, store) if case.race is Race.VACUUM else None
    kept = tables(root)
    committers = case.writers - 1
    batches = [_steps(f"live{i}", _STEPS_PER_COMMITTER) for i in range(committers)]
    writers = [
        root.start("commit", i, root.committer_records(i, batch)) for i, batch in enumerate(batches)
    ]
    role = "vacuum" if case.race is Race.VACUUM else "compact"
    writers.append(root.start(role, committers, committers))
    reports = root.race(writers)
    assert_raced(reports, case)
    found = assert_sound(root, case.expected)
    assert_every_commit_once(found, [*before, *(s for batch in batches for s in batch)], case)
    for name, frame in kept.items():
        assert rows(frame) <= rows(found[name]), f"{case.expected}: {name} lost committed rows"
    (maintenance,) = [r for r in reports if r["role"] == role]
    if leftovers is not None:
        assert sorted(maintenance["removed"]) == sorted(leftovers.removed), case.expected
        assert sorted(maintenance["log_entries"]) == sorted(leftovers.log_entries), case.expected
        gone = (*leftovers.removed, *leftovers.log_entries)
        assert not any(exists(store.layout, where) for where in gone), case.expected
        assert all(exists(store.layout, where) for where in leftovers.kept), case.expected
    else:
        assert maintenance["compacted"] > 0, case.expected
        for place in table_places(store.layout):
            log = table_files(place, "_delta_log/")
            assert [n for n in log if n.endswith(".checkpoint.parquet")], case.expected


def race_auto_compaction(root: Root, case: Case) -> None:
    """Every writer commits steps through a store that compacts after its commits."""
    store = DeltaStore(root.given, compact=False)
    before = _steps("before", 2)
    for step in before:
        commit_function_step(store, step)
    kept = tables(root)
    batches = [_steps(f"auto{i}", _STEPS_PER_COMMITTER + 1) for i in range(case.writers)]
    writers = [
        root.start("commit-auto", i, root.committer_records(i, batch))
        for i, batch in enumerate(batches)
    ]
    reports = root.race(writers)
    found = assert_sound(root, case.expected)
    assert_every_commit_once(found, [*before, *(s for batch in batches for s in batch)], case)
    for name, frame in kept.items():
        assert rows(frame) <= rows(found[name]), f"{case.expected}: {name} lost committed rows"
    assert sum(report["committed"] for report in reports) == sum(map(len, batches))
    assert sum(report["auto_compacted"] for report in reports) > 0, case.expected
    compacted = {table for report in reports for table in report["auto_tables"]}
    assert EXECUTIONS.name in compacted, f"{case.expected}: compacted only {compacted}"


RACES: dict[Race, Callable[[Root, Case], None]] = {
    Race.SAME_KEY: race_pipelines,
    Race.DISJOINT_KEYS: race_pipelines,
    Race.RECOVERY: race_recovery,
    Race.VACUUM: race_maintenance,
    Race.COMPACTION: race_maintenance,
    Race.AUTO_COMPACTION: race_auto_compaction,
}


def new_root(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path | str:
    """A new root of ``kind``: a directory, or ``s3://{a new bucket}/root``.

    For S3, the environment a user of the local server sets, which every writer inherits
    (with this test's ``$STEMMA_STATE_DIR``: one local half for all, one machine).
    """
    if kind == "local":
        return tmp_path / "root"
    for name, value in S3_USER_ENV.items():
        monkeypatch.setenv(name, value)
    for name in ("STEMMA_STORAGE_OPTIONS", "STEMMA_STORE"):  # nothing of stemma's own choosing
        monkeypatch.delenv(name, raising=False)
    return f"s3://{make_bucket(S3_ENDPOINT)}/root"


@pytest.mark.parametrize("kind", ["local", "s3"])
@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.writers}-writers-{c.race.replace(' ', '-')}" for c in CASES]
)
def test_concurrency_case_ends_as_its_row_says(
    tmp_path: Path, case: Case, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    root = Root(given=new_root(kind, tmp_path, monkeypatch), barrier=barrier)
    RACES[case.race](root, case.on(kind))
