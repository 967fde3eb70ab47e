"""A crash at an automatic compaction loses nothing and duplicates nothing (issue 33).

The store compacts a table after its commits, in a background thread, once the table holds the
policy's number of small files. Here the crash pipeline (``crash_pipeline.py``) runs with
``$STEMMA_COMPACT_SMALL_FILES=2``, so its three waves make tables due: a clean run lists the
points it reaches, ``delta.auto_compacted`` among them (after each automatic compaction's Delta
commit). The run is then killed (``SIGKILL`` to its whole process group) at its first automatic
compaction, and the rerun must end with the clean run's tables, as at every other write point
(``crash_cases.crash_case``). The point has one name for every table: which table the thread
compacts first depends on timing, while "the first compaction of the run" is reached by every
run. A kill inside a compaction, before its commit, leaves the table as it was (and a data file
no commit references, which ``stemma vacuum`` removes): the state the points before it stand for.
"""

from __future__ import annotations

import pathlib

import pytest

from stemma.storage.auto_compaction import POINT
from stemma.storage.compaction_policy import SMALL_FILES_ENV
from tests.faults.crash_cases import CleanRun, Point, clean_run, crash_case

CASE_BUDGET_SECONDS = 600
"""Two runs of a few seconds each, on a loaded 2-core machine."""


@pytest.fixture
def compacting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run of the pipeline compacts a table once it holds two small files."""
    monkeypatch.setenv(SMALL_FILES_ENV, "2")


@pytest.mark.timeout(CASE_BUDGET_SECONDS)
@pytest.mark.usefixtures("compacting")
def test_a_crash_at_the_first_automatic_compaction_then_a_rerun_ends_as_a_clean_run(
    tmp_path: pathlib.Path,
) -> None:
    clean: CleanRun = clean_run(tmp_path / "clean", "local")
    reached = [point for point in clean.points if point.name == POINT]
    assert reached, f"a clean run compacted nothing: {sorted({p.name for p in clean.points})}"
    first = Point(POINT, 1, reached[0].seq, reached[0].pid)

    problems = crash_case(tmp_path / "crashed", "local", first, clean)

    assert not problems, f"killed at {first.address}:\n" + "\n".join(problems)
