"""The "Going to SLURM" tutorial's script, run as a reader would, on the local cluster.

``tests/docs/test_code_blocks.py`` leaves this example to this file (its page says
``<!-- docs-test: slurm -->``), so the docs tests never need a cluster.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import polars as pl
import pytest

from stemma.storage import artifacts, executions

pytestmark = pytest.mark.slurm

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "going_to_slurm.py"


def _run_example(workdir: pathlib.Path, *argv: str) -> str:
    workdir.mkdir()
    script = workdir / EXAMPLE.name
    script.write_bytes(EXAMPLE.read_bytes())
    env = {**os.environ, "STEMMA_ROOT": str(workdir / ".stemma")}
    env.pop("STEMMA_BACKEND", None)
    done = subprocess.run(
        [sys.executable, script.name, *argv],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    return done.stdout


def test_going_to_slurm_example_builds_the_local_runs_artifacts_on_the_cluster(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    on_slurm = _run_example(tmp_path / "cluster")  # slurm is the script's default
    on_local = _run_example(tmp_path / "laptop", "local")

    slurm_root, local_root = tmp_path / "cluster" / ".stemma", tmp_path / "laptop" / ".stemma"
    slurm_ids = set(artifacts(slurm_root).get_column("artifact_id").to_list())
    assert slurm_ids == set(artifacts(local_root).get_column("artifact_id").to_list())
    assert len(slurm_ids) == 4 + 4 + 4  # datasets, scaled datasets, metrics
    # the printed metric ids are the same too: what the tutorial tells the reader to compare
    assert on_slurm.splitlines()[-2:] == on_local.splitlines()[-2:]
    assert "on slurm:" in on_slurm
    ran = executions(slurm_root).filter(pl.col("success"))
    by_step = dict(ran.group_by("step_name").agg(pl.col("backend").unique()).iter_rows())
    assert set(by_step) == {"example.generate", "example.transform", "example.metrics"}
    assert all(backends == ["slurm"] for backends in by_step.values()), by_step
    ledgers = list((slurm_root / "runs").glob("*/slurm_jobs.jsonl"))
    assert len(ledgers) == 1
    assert len(ledgers[0].read_text().splitlines()) == 3  # one array per step
