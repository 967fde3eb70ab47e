"""A crash at every durable write point of a small pipeline recovers to a clean run's tables.

The pipeline (``crash_pipeline.py``: a lazy graph of a creator, a unit step over its outputs
and a function step publishing ``OUT``) runs once on the local backend with
``$STEMMA_CRASH_LOG`` set, listing every point it reaches. Then, for each point: a run killed
there (``SIGKILL`` to the whole run, as a power cut), a run that finishes, and the tables
compared with the clean run's (``crash_cases.py``). Two cases run at a time; every failure is
collected, so one run of the test names every point that fails.
"""

from __future__ import annotations

import pathlib
from concurrent.futures import ThreadPoolExecutor

import polars as pl
import pytest

from tests.faults.crash_cases import (
    CleanRun,
    Point,
    cases,
    clean_run,
    crash_case,
    crashed_root,
    recovery_points,
)
from tests.faults.crash_tables import EXECUTIONS, INDEX, differences

CASES = 50
"""Crash cases of the pipeline: every point a clean run reaches, the live state's heartbeat
but once (``crash_cases.TIMER_DRIVEN``)."""
PARALLEL_CASES = 2
"""Cases run side by side: this machine has two cores, each case two short processes."""
CASE_BUDGET_SECONDS = 900
"""What a test of many cases may take on a loaded 2-core machine (about 90 s on an idle one)."""
EXPECTED_POINTS = frozenset(
    {
        "live.state",
        "delta.append.orchestration.steps",
        "staging.tables",
        "staging.sentinel",
        "wave.claimed",
        "lock.bundle_removed",
        "wave.outputs_staged",
        "wave.sealed",
        "delta.append.artifacts.data",
        "delta.append.artifacts.file_refs",
        "delta.append.artifacts.metrics",
        "delta.append.artifacts.index",
        "delta.append.provenance.artifact_edges",
        "delta.append.provenance.execution_edges",
        "delta.append.orchestration.step_outputs",
        "delta.append.orchestration.executions",
        "retire.renamed",
        "out.published",
    }
)
"""The kinds of write a clean local run of the pipeline makes (docs/design/0013-crash-points.md)."""
EXPECTED_SQLITE_POINTS = frozenset(
    {
        "live.state",
        "sqlite.commit",
        "staging.tables",
        "staging.sentinel",
        "retire.renamed",
        "retire.removed",
        "out.published",
    }
)
"""The kinds of write the same run makes on the SQLite store (``STEMMA_STORE=sqlite``): one
transaction per wave where Delta appends each table."""
SQLITE_CASES = 24
RESTARTS_KILLED_AGAIN = ("wave.claimed:1", "retire.renamed:1")
"""Crashes whose restart is itself killed at each point of its recovery. The first leaves a wave
its claimer had not sealed: recovery hands its bundle back and commits it alone (the paths only
recovery takes). The second leaves a retired wave not yet removed. A sealed wave is committed by
recovery through the same code as by its claimer, whose every point the first test crashes."""


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> CleanRun:
    return clean_run(tmp_path_factory.mktemp("clean"), "local")


@pytest.fixture(scope="module")
def clean_sqlite(tmp_path_factory: pytest.TempPathFactory) -> CleanRun:
    return clean_run(tmp_path_factory.mktemp("clean-sqlite"), "local", "sqlite")


def _run_cases(
    tmp_path: pathlib.Path, clean: CleanRun, points: list[Point], store: str = "delta"
) -> None:
    def case(point: Point) -> tuple[Point, list[str]]:
        base = tmp_path / f"case-{point.seq}"
        return point, crash_case(base, "local", point, clean, store=store)

    with ThreadPoolExecutor(PARALLEL_CASES) as pool:
        results = list(pool.map(case, points))

    failed = [f"{p.address} (point {p.seq}): {issue}" for p, found in results for issue in found]
    assert not failed, f"{len(failed)} problem(s) in {len(results)} cases:\n" + "\n".join(failed)


def test_every_write_point_of_a_local_run_is_reached_and_listed(clean: CleanRun) -> None:
    assert {point.name for point in clean.points} == EXPECTED_POINTS
    assert [point.seq for point in clean.points] == list(range(1, len(clean.points) + 1))
    assert len(cases(clean.points)) == CASES


def test_the_comparison_names_a_repeated_row_an_orphan_and_a_lost_execution(
    clean: CleanRun,
) -> None:
    tables = dict(clean.tables)
    assert differences(tables, clean.tables) == []
    index = tables[INDEX]
    tables[INDEX] = pl.concat([index, index.head(1)])
    executions = tables[EXECUTIONS]
    tables[EXECUTIONS] = executions.tail(executions.height - 1)
    found = "\n".join(differences(tables, clean.tables))
    assert "artifacts/index repeats 1 row" in found
    assert "execution rows differ" in found
    assert "naming executions not recorded" in found  # the lost execution's edges


@pytest.mark.timeout(CASE_BUDGET_SECONDS)
def test_a_crash_at_every_write_point_then_a_rerun_ends_as_a_clean_run(
    tmp_path: pathlib.Path, clean: CleanRun
) -> None:
    _run_cases(tmp_path, clean, cases(clean.points))


@pytest.mark.timeout(CASE_BUDGET_SECONDS)
def test_a_crash_at_every_write_point_of_the_sqlite_store_then_a_rerun_ends_as_a_clean_run(
    tmp_path: pathlib.Path, clean_sqlite: CleanRun
) -> None:
    assert {point.name for point in clean_sqlite.points} == EXPECTED_SQLITE_POINTS
    points = cases(clean_sqlite.points)
    assert len(points) == SQLITE_CASES
    _run_cases(tmp_path, clean_sqlite, points, "sqlite")


@pytest.mark.timeout(CASE_BUDGET_SECONDS)
def test_a_crash_at_every_point_of_recovery_then_a_rerun_ends_as_a_clean_run(
    tmp_path: pathlib.Path, clean: CleanRun
) -> None:
    work: list[tuple[str, Point, pathlib.Path]] = []
    for first in RESTARTS_KILLED_AGAIN:
        crashed = crashed_root(tmp_path / first / "crashed", "local", first)
        recovering = recovery_points(tmp_path / first / "listed", "local", crashed)
        assert recovering, f"a restart after {first} has nothing to recover"
        work.extend((first, point, crashed) for point in recovering)

    def case(item: tuple[str, Point, pathlib.Path]) -> tuple[str, list[str]]:
        first, point, crashed = item
        base = tmp_path / first / f"case-{point.seq}"
        found = crash_case(base, "local", point, clean, start_from=crashed)
        return f"{first}, then {point.address} in recovery", found

    with ThreadPoolExecutor(PARALLEL_CASES) as pool:
        results = list(pool.map(case, work))

    failed = [f"{where}: {issue}" for where, found in results for issue in found]
    assert not failed, f"{len(failed)} problem(s) in {len(results)} cases:\n" + "\n".join(failed)
