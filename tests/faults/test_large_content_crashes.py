"""A power cut just after a large content was kept as a file (``content.kept``), before its
unit was staged: the next run makes the unit again, finds the file (same id, same bytes), and
ends as a clean run; nothing is left that a vacuum would have to take.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys

from stemma.core.crash_points import AT_ENV, LOG_ENV, SCOPE_ENV
from stemma.storage import executions
from stemma.storage.maintenance import vacuum_root

CHECKOUT = pathlib.Path(__file__).resolve().parents[2]


def _run(root: pathlib.Path, **crash: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (AT_ENV, LOG_ENV, SCOPE_ENV)}
    env.update(crash)
    return subprocess.run(
        [sys.executable, "-m", "tests.faults.large_content_pipeline", str(root)],
        cwd=CHECKOUT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        start_new_session=True,  # the power cut kills this run's process group only
    )


def test_a_crash_after_a_content_was_kept_then_a_rerun_ends_as_a_clean_run(
    tmp_path: pathlib.Path,
) -> None:
    clean = _run(tmp_path / "clean")
    assert clean.returncode == 0, clean.stderr[-3000:]
    expected = json.loads(clean.stdout)
    assert expected["ok"]
    assert len(expected["data"]) == 2

    root = tmp_path / "crashed"
    crashed = _run(root, **{LOG_ENV: str(tmp_path / "points.log"), AT_ENV: "content.kept:1"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-3000:]
    assert len(list((root / "contents").rglob("*"))) >= 1  # the file kept before the cut

    again = _run(root)

    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout) == expected  # the same ids, every byte read
    done = executions(root).filter(executions(root)["success"])
    assert done.height == 3  # the maker once, each reader once: nothing twice
    kept = sorted(p.name for p in (root / "contents").rglob("*") if p.is_file())
    assert kept == expected["data"]  # no temporary, no stray file
    swept = vacuum_root(root, retain_hours=1, min_retain_hours=0, force=True)
    assert not [r for r in swept.removals if r.kind == "contents"]
