"""A crash inside `stemma compact` or `stemma vacuum --apply` loses nothing (issue 21).

Compaction rewrites a table's files and checkpoints its log; vacuum deletes replaced files and
the log entries before the newest checkpoint. Killed at each of those write points (the first
and the last table each reaches), the root's tables still read exactly the rows a clean run
committed, and the same command run again finishes.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

from stemma.core.crash_points import AT_ENV, LOG_ENV
from tests.faults.crash_cases import clean_run, points_of
from tests.faults.crash_tables import delta_tables, row_set

STEMMA = pathlib.Path(sys.executable).with_name("stemma")
AGED_SECONDS = 3 * 3600
"""Files made this much older than now: past vacuum's shortest retention (1 h)."""


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The root of a clean run of the crash pipeline (``clean_run`` keeps it at ``base/root``)."""
    base = tmp_path_factory.mktemp("clean")
    clean_run(base, "local")
    return base / "root"


def _stemma(root: pathlib.Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean_env = {k: v for k, v in os.environ.items() if k not in (AT_ENV, LOG_ENV)}
    return subprocess.run(
        [str(STEMMA), "--root", str(root), *args],
        env={**clean_env, **env},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        start_new_session=True,
    )


def _aged(root: pathlib.Path) -> None:
    """Every file and folder of the root as if written three hours ago."""
    past = time.time() - AGED_SECONDS
    for path in [root, *root.rglob("*")]:
        os.utime(path, (past, past))


def _rows(root: pathlib.Path) -> dict[str, set[str]]:
    return {name: row_set(frame) for name, frame in delta_tables(root).items()}


def _copy(clean: pathlib.Path, base: pathlib.Path, name: str, *, compacted: bool) -> pathlib.Path:
    root = base / name
    shutil.copytree(clean, root)
    if compacted:
        # vacuum's cases: a checkpointed log, and in every table a file no commit references
        # (as a commit that lost a conflict leaves one), all three hours old
        assert _stemma(root, "compact").returncode == 0
        for log in (root / "delta").glob("*/*/_delta_log"):
            data = next(log.parent.glob("*.parquet"), None)
            if data is not None:
                shutil.copy(data, log.parent / "part-00000-orphan.parquet")
        _aged(root)
    return root


@pytest.mark.parametrize(
    ("command", "kinds"),
    [
        (("compact",), ("delta.compacted", "delta.checkpoint")),
        (("vacuum", "--apply", "--retain-hours", "1"), ("delta.log_cleaned", "delta.vacuumed")),
    ],
    ids=["compact", "vacuum"],
)
def test_a_crash_inside_maintenance_loses_no_committed_row(
    clean: pathlib.Path, tmp_path: pathlib.Path, command: tuple[str, ...], kinds: tuple[str, ...]
) -> None:
    expected = _rows(clean)
    vacuum = command[0] == "vacuum"
    listed = _copy(clean, tmp_path, "listed", compacted=vacuum)
    log = tmp_path / "points.log"
    done = _stemma(listed, *command, **{LOG_ENV: str(log)})
    assert done.returncode == 0, done.stderr
    reached = [p.address for p in points_of(log) if p.name.startswith(kinds)]
    per_kind = [[a for a in reached if a.startswith(kind)] for kind in kinds]
    assert all(per_kind), f"{command} reached {reached}: each of {kinds} should be reached"
    cases = sorted({address for found in per_kind for address in (found[0], found[-1])})

    for n, address in enumerate(cases):
        root = _copy(clean, tmp_path, f"case {n}", compacted=vacuum)
        crashed = _stemma(root, *command, **{AT_ENV: address})
        assert crashed.returncode != 0, f"{address}: the command should have been killed there"
        assert _rows(root) == expected, f"killed at {address}: committed rows changed"
        again = _stemma(root, *command)
        assert again.returncode == 0, f"after {address}: {again.stderr}"
        assert _rows(root) == expected, f"after {address} and a rerun: committed rows changed"
