"""A sample of the crash points on the real local SLURM cluster: each ends as a clean run.

The same pipeline and checks as ``tests/faults/test_every_write_point.py`` (which crashes at
every point on the local backend), with every unit in SLURM elements. The sample kills the
orchestrator: just after it recorded its first array in the job ledger (the elements it
submitted live on, and stage, while it is dead), just after it sealed a wave, and in the middle
of a wave's appends. And it kills an element alone, just after it staged its bundle and before
it reported (``staging.sentinel:2``): the run, which outlives it, must find the bundle and
commit it as the unit's outcome, once (not record the unit crashed beside it).
"""

from __future__ import annotations

import pathlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.faults.crash_cases import CleanRun, Point, clean_run, crash_case

pytestmark = pytest.mark.slurm

SAMPLE = ("slurm.ledger:1", "wave.sealed:2", "delta.append.artifacts.index:2")
"""The sampled points reached by the orchestrator."""
IN_ELEMENTS = ("staging.sentinel:2",)
"""The sampled points reached in an element: killing it leaves the run alive."""


def test_a_crash_beside_a_slurm_run_at_sampled_points_then_a_rerun_ends_as_a_clean_run(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    clean: CleanRun = clean_run(tmp_path / "clean", "slurm")
    by_address = {point.address: point for point in clean.points}
    assert set(SAMPLE + IN_ELEMENTS) <= set(by_address), sorted(by_address)
    orchestrator = by_address["slurm.ledger:1"].pid
    assert {by_address[address].pid for address in SAMPLE} == {orchestrator}
    staged_by = {point.pid for point in clean.points if point.name == "staging.sentinel"}
    assert orchestrator not in staged_by  # every unit ran in an element
    assert {by_address[address].pid for address in IN_ELEMENTS} <= staged_by

    def case(address: str) -> tuple[Point, list[str]]:
        point = by_address[address]
        kills = address not in IN_ELEMENTS
        base = tmp_path / f"case-{point.seq}"
        return point, crash_case(base, "slurm", point, clean, kills_the_run=kills)

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(case, SAMPLE + IN_ELEMENTS))

    failed = [f"{p.address}: {problem}" for p, found in results for problem in found]
    assert not failed, "\n".join(failed)
