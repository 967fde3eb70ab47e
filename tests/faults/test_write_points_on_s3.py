"""A crash at every durable write point of a run on an S3 root recovers to a clean run's tables.

The same pipeline and cases as ``test_every_write_point`` (``crash_cases``), with the root in a
bucket of the real S3 server: the tables and the function step's output kept there, the live
state and the staging in the root's local half. Two more points are reached there: the output
copied to the bucket without its manifest (``out.copied``), and whole (``out.kept``).
"""

from __future__ import annotations

import pathlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.faults.bucket_cases import bucket_clean_run, bucket_crash_case
from tests.faults.crash_cases import CleanRun, Point, cases
from tests.faults.test_every_write_point import EXPECTED_POINTS
from tests.storage.object_roots.conftest import make_bucket
from tests.storage.object_roots.conftest import s3_env as s3_env  # (the fixture, used below)

PARALLEL_CASES = 2
CASE_BUDGET_SECONDS = 900


@pytest.fixture
def bucket(s3_env: str) -> str:
    return make_bucket(s3_env)


@pytest.fixture
def clean(tmp_path: pathlib.Path, bucket: str) -> CleanRun:
    return bucket_clean_run(tmp_path / "clean", bucket)


@pytest.mark.timeout(CASE_BUDGET_SECONDS)
def test_a_crash_at_every_write_point_on_s3_then_a_rerun_ends_as_a_clean_run(
    tmp_path: pathlib.Path, bucket: str, clean: CleanRun
) -> None:
    assert {point.name for point in clean.points} == EXPECTED_POINTS | {"out.copied", "out.kept"}

    def case(point: Point) -> tuple[Point, list[str]]:
        return point, bucket_crash_case(tmp_path / f"case-{point.seq}", bucket, point, clean)

    with ThreadPoolExecutor(PARALLEL_CASES) as pool:
        results = list(pool.map(case, cases(clean.points)))

    failed = [f"{p.address} (point {p.seq}): {issue}" for p, found in results for issue in found]
    assert not failed, f"{len(failed)} problem(s) in {len(results)} cases:\n" + "\n".join(failed)
