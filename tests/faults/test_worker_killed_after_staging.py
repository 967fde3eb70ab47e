"""A worker killed after it staged its pack, before it reported: the run takes what it staged.

The worker's bundle is complete (its sentinel written) but its path never reached the
orchestrator. The run must commit that bundle as the pack's outcome, not record the units as
crashed and leave the bundle to the next start's recovery (which gave each unit two execution
rows, one failed and one succeeded, and failed a step whose work was done). Each case kills
only the worker (``$STEMMA_CRASH_SCOPE=process``) at one ``staging.sentinel`` of
``crash_pipeline.py``: the run must finish by itself, succeed, and leave the tables a clean
run leaves; a second run changes nothing.
"""

from __future__ import annotations

import json
import pathlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.faults.crash_cases import (
    SENTINELS,
    CleanRun,
    clean_run,
    points_of,
    run_pipeline,
    staging_left,
    tables_of,
)
from tests.faults.crash_tables import differences

CASES: tuple[tuple[str, int], ...] = (
    ("delta", 2),  # the function step's unit (its value comes back from the committed bundle)
    ("delta", 3),  # the unit step's first pack
    ("sqlite", 3),
)
"""(store, K) of ``staging.sentinel:K``: in a clean run the creator stages first, then the
function step, then the unit step's packs (``docs/design/0013-crash-points.md``)."""
BUDGET_SECONDS = 600
"""For every case on a loaded 2-core machine (about 30 s on an idle one)."""


def _worker_killed_case(base: pathlib.Path, store: str, nth: int, clean: CleanRun) -> list[str]:
    """Every way a run whose worker is killed at ``staging.sentinel:nth`` falls short."""
    base.mkdir(parents=True)
    root, log = base / "root", base / "points.log"
    address = f"staging.sentinel:{nth}"
    first = run_pipeline(root, "local", log=log, at=address, store=store, scope="process")
    where = f"{store}, a worker killed at {address}"
    if first.returncode != 0:
        return [f"{where}: the run failed (exit {first.returncode}): {first.stderr[-3000:]}"]
    problems: list[str] = []
    points = points_of(log)
    hit = next(p for p in points if p.address == address)
    orchestrator = {p.pid for p in points if p.name == "live.state"}
    if hit.pid in orchestrator or any(p.pid == hit.pid for p in points if p.seq > hit.seq):
        problems.append(f"{where}: the point was not reached by a worker that died there")
    if json.loads(first.stdout) != clean.outputs:
        problems.append(f"{where}: the run offers other results: {first.stdout.strip()}")
    problems.extend(f"{where}: {p}" for p in differences(tables_of(root, store), clean.tables))
    problems.extend(f"{where}: {p}" for p in staging_left(root, SENTINELS[store]))

    again = run_pipeline(root, "local", store=store)
    if again.returncode != 0 or json.loads(again.stdout) != clean.outputs:
        problems.append(f"{where}: the second run differs: {again.stderr[-3000:]}")
    problems.extend(
        f"{where}, run again: {p}" for p in differences(tables_of(root, store), clean.tables)
    )
    return problems


@pytest.mark.timeout(BUDGET_SECONDS)
def test_a_worker_killed_after_staging_its_pack_then_the_run_commits_it_once_and_succeeds(
    tmp_path: pathlib.Path,
) -> None:
    stores: tuple[str, ...] = ("delta", "sqlite")

    def clean(store: str) -> CleanRun:
        return clean_run(tmp_path / f"clean-{store}", "local", store)

    with ThreadPoolExecutor(2) as pool:
        cleans: dict[str, CleanRun] = dict(zip(stores, pool.map(clean, stores), strict=True))
        for store, found in cleans.items():
            sentinels = [p for p in found.points if p.name == "staging.sentinel"]
            assert len(sentinels) >= 3, f"{store}: the clean run staged {len(sentinels)} bundles"

        def case(store_nth: tuple[str, int]) -> list[str]:
            store, nth = store_nth
            return _worker_killed_case(tmp_path / f"{store}-{nth}", store, nth, cleans[store])

        problems = [problem for found in pool.map(case, CASES) for problem in found]
    assert not problems, "\n".join(problems)
