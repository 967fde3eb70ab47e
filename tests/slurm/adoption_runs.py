"""Starting, killing and checking the adoption tests' runs (imported by name, like slurm_testing).

A run is a script (``adoptable_on_slurm.py``, ``adoptable_lazy.py``) started in its own session,
so that ``kill -9`` of its process group is the death of its orchestrator alone: its SLURM
elements are not in the group. Every unit start leaves a file in the run's ``ran`` directory
(``adoption_tasks``); sacct tells how many times each element ran.
"""

import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
from collections import Counter
from typing import Any

import polars as pl
from adoption_tasks import GATE, RAN_DIR

from stemma.core.crash_points import AT_ENV, LOG_ENV
from stemma.slurm.job_ledger import LEDGER_NAME, LedgerEntry, read_ledger
from stemma.storage import artifacts, executions

SCRIPT = pathlib.Path(__file__).with_name("adoptable_on_slurm.py")
LAZY = pathlib.Path(__file__).with_name("adoptable_lazy.py")
SECONDS = "3"
"""How long each slow unit sleeps."""
NOT_STARTED = ("", "Unknown", "None")
"""sacct's Start of an element that never ran."""


def run_env(
    ran: pathlib.Path, crash_at: str = "", gate: pathlib.Path | None = None
) -> dict[str, str]:
    """The environment of a run counting its unit starts in ``ran``; killed at ``crash_at``;
    its slow units waiting for the file ``gate`` before they return."""
    ran.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, RAN_DIR: str(ran)}
    if gate is not None:
        env[GATE] = str(gate)
    if crash_at:
        env |= {AT_ENV: crash_at, LOG_ENV: str(ran.parent / f"points-{crash_at}.log")}
    return env


def start(
    root: pathlib.Path,
    ran: pathlib.Path,
    script: pathlib.Path = SCRIPT,
    *,
    crash_at: str = "",
    gate: pathlib.Path | None = None,
) -> subprocess.Popen[str]:
    """Start ``script`` on SLURM in its own session (its orchestrator is its process group)."""
    process = subprocess.Popen(
        [sys.executable, str(script), str(root), SECONDS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=run_env(ran, crash_at, gate),
        start_new_session=True,
    )
    _STARTED.append(process)
    return process


_STARTED: list[subprocess.Popen[str]] = []
"""Every run ``start`` started: ``stop_started`` ends those a failed test left behind."""


def stop_started() -> None:
    """``kill -9`` every run still alive that ``start`` started, and close its pipes."""
    while _STARTED:
        process = _STARTED.pop()
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)


def first_line(process: subprocess.Popen[str]) -> str:
    """The first line the run printed (the pipeline script prints its run id there)."""
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    assert line, process.stderr.read() if process.stderr else "nothing printed"
    return line


def kill(process: subprocess.Popen[str]) -> None:
    """``kill -9`` the orchestrator (a stopped one too), and wait for it."""
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)  # (and its pipes closed)


def freeze(process: subprocess.Popen[str]) -> None:
    """Stop the orchestrator where it is: it commits nothing more, its elements run on."""
    os.killpg(process.pid, signal.SIGSTOP)


def crashed(process: subprocess.Popen[str]) -> None:
    """Wait for a run armed with ``crash_at`` to kill itself there."""
    _, err = process.communicate(timeout=300)
    assert process.returncode == -signal.SIGKILL, f"it did not crash: {err[-3000:]}"


def finish(
    root: pathlib.Path, ran: pathlib.Path, script: pathlib.Path = SCRIPT, *backend: str
) -> list[str]:
    """Run ``script`` to its end; its printed lines."""
    done = subprocess.run(
        [sys.executable, str(script), str(root), SECONDS, *backend],
        capture_output=True,
        text=True,
        env=run_env(ran),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def finish_pipeline(root: pathlib.Path, ran: pathlib.Path, *backend: str) -> tuple[str, Any]:
    """Run the pipeline script to its end: its run id and its finalize() summary."""
    lines = finish(root, ran, SCRIPT, *backend)
    return lines[0], json.loads(lines[-1])


def unit_starts(ran: pathlib.Path) -> dict[str, int]:
    """How many times each dataset's (or leaf's) unit started."""
    return dict(Counter(path.name.split(".", 1)[0] for path in ran.iterdir()))


def tables(root: pathlib.Path) -> tuple[list[str], dict[str, list[str]]]:
    """The artifact ids, and per step the execution keys of its successful rows."""
    ids = sorted(artifacts(root)["artifact_id"].to_list())
    rows = executions(root).filter(pl.col("success"))
    keys = {
        str(name): sorted(group["execution_spec_id"].to_list())
        for (name,), group in rows.group_by("step_name")
    }
    return ids, keys


def ledger(root: pathlib.Path, run_id: str) -> list[LedgerEntry]:
    """What run ``run_id`` recorded sending (or adopting)."""
    return list(read_ledger(root / "runs" / run_id / LEDGER_NAME))


def element_runs_per_key(root: pathlib.Path) -> Counter[str]:
    """Per execution key, how many times an element computing it ran, as sacct says.

    The elements are every run's ledger entries on ``root`` (an adopted array is listed by the
    runs that adopted it too: it counts once). An element counts when sacct gives it a start
    (``--duplicates``: a requeued element counts each time it ran); a job that is no array
    (``123``) is its element 0.
    """
    keys: dict[tuple[str, int], tuple[str, ...]] = {}
    for path in sorted(root.glob(f"runs/*/{LEDGER_NAME}")):
        for entry in read_ledger(path):
            for index, computed in enumerate(entry.keys):
                if computed:  # (an adopting run lists only the elements it waited for)
                    keys[entry.job_id, index] = computed
    if not keys:
        return Counter()
    query = ["sacct", "-X", "-n", "-P", "--duplicates", "--format=JobID,Start"]
    arrays = sorted({array for array, _ in keys})
    out = subprocess.run(
        [*query, "-j", ",".join(arrays)], capture_output=True, text=True, check=True
    ).stdout
    counts: Counter[str] = Counter()
    for line in out.splitlines():
        job, _, started = line.partition("|")
        array, _, index = job.partition("_")
        if started.strip() in NOT_STARTED or not (index.isdigit() or not index):
            continue
        counts.update(keys.get((array, int(index or 0)), ()))
    return counts
