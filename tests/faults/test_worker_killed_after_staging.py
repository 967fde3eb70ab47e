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
import os
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from stemma.core.crash_points import AT_ENV, LOG_ENV, SCOPE_ENV
from tests.faults.crash_cases import (
    RUN_TIMEOUT,
    SENTINELS,
    CleanRun,
    clean_run,
    points_of,
    run_pipeline,
    staging_left,
    tables_of,
)
from tests.faults.crash_tables import EXECUTIONS, differences

PACK_SCRIPT = pathlib.Path(__file__).parent / "pack_pipeline.py"
FUNCTION_PACK_SCRIPT = pathlib.Path(__file__).parent / "function_pack_pipeline.py"

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


def _killed_run(
    script: pathlib.Path, tmp_path: pathlib.Path, store: str, address: str
) -> tuple[object, list[str]]:
    """Run ``script`` with a worker killed at ``address``; its output, and what is wrong.

    Wrong: the run failed, the point was not reached by a worker that died there, a unit has
    several execution rows, or a complete bundle is left in staging.
    """
    root, log = tmp_path / "root", tmp_path / "points.log"
    env = {k: v for k, v in os.environ.items() if k not in (AT_ENV, LOG_ENV, SCOPE_ENV)}
    env |= {"STEMMA_STORE": store, LOG_ENV: str(log), SCOPE_ENV: "process", AT_ENV: address}
    done = subprocess.run(
        [sys.executable, str(script), str(root)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
        start_new_session=True,
    )
    if done.returncode != 0:
        return None, [f"the run failed (exit {done.returncode}): {done.stderr[-3000:]}"]
    problems: list[str] = []
    points = points_of(log)
    hit = next(p for p in points if p.address == address)
    if any(p.pid == hit.pid and p.seq > hit.seq for p in points):
        problems.append(f"the worker reaching {address} lived on")
    executions = tables_of(root, store)[EXECUTIONS]
    keys = executions.get_column("execution_spec_id")
    if executions.height != keys.n_unique():
        problems.append(f"{executions.height} execution rows for {keys.n_unique()} units")
    problems.extend(staging_left(root, SENTINELS[store]))
    return json.loads(done.stdout), problems


@pytest.mark.timeout(BUDGET_SECONDS)
@pytest.mark.parametrize("store", ["delta", "sqlite"])
def test_a_worker_killed_after_staging_a_sized_pack_then_its_units_are_not_sent_again(
    tmp_path: pathlib.Path, store: str
) -> None:
    # 24 quick units share sized packs; a sized pack whose worker died is sent again one unit
    # per pack, unless its worker had staged it: then it is taken from staging, run once.
    # (the step's second pack, staging.sentinel:3, is sized past one unit by then)
    out, problems = _killed_run(PACK_SCRIPT, tmp_path, store, "staging.sentinel:3")
    assert problems == []
    assert out == {"succeeded": 24, "failed": 0, "status": "completed"}


@pytest.mark.timeout(BUDGET_SECONDS)
@pytest.mark.parametrize("store", ["delta", "sqlite"])
def test_a_worker_killed_after_staging_a_pack_of_function_steps_then_each_runs_once(
    tmp_path: pathlib.Path, store: str
) -> None:
    # 12 function steps ready at once share packs (the third bundle holds several); their
    # values, which only the dead worker's reply carried, are read from the committed bundle.
    out, problems = _killed_run(FUNCTION_PACK_SCRIPT, tmp_path, store, "staging.sentinel:3")
    assert problems == []
    assert out == list(range(12))
