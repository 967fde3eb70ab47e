"""Fixtures for the tests that run against the real local SLURM cluster.

Those tests are marked ``slurm`` and are never skipped: when the cluster does not answer they
fail, naming the command that starts it.
"""

import os
import pathlib
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator

import pytest

from stemma.core.run_ids import new_run_id
from stemma.slurm import PollSettings, SlurmBackend

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))  # jobs import slurm_tasks by name: the backend passes sys.path on
from slurm_testing import START, CommandLog, Run  # noqa: E402


@pytest.fixture(scope="session")
def slurm_cluster() -> None:
    """Fail (never skip) unless sinfo and sacct answer."""
    for argv in (["sinfo", "-h", "-o", "%T"], ["sacct", "-n", "-X", "-S", "now-1minutes"]):
        if shutil.which(argv[0]) is None:
            pytest.fail(f"{argv[0]} is not installed: start the local SLURM cluster with `{START}`")
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            pytest.fail(
                f"`{' '.join(argv)}` failed ({done.stderr.strip()}): the local SLURM cluster is "
                f"not running; start it with `{START}`"
            )


@pytest.fixture(autouse=True)
def default_root(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """Where a backend built with no root (``SlurmBackend()``) logs, instead of ``./.stemma``."""
    root = tmp_path / "default root"
    monkeypatch.setenv("STEMMA_ROOT", str(root))
    return root


@pytest.fixture
def backend(slurm_cluster: None) -> Iterator[SlurmBackend]:
    slurm = SlurmBackend(cancel_grace_seconds=2.0, poll=PollSettings(max_interval=1.0))
    yield slurm
    slurm.terminate(grace_seconds=0)


@pytest.fixture
def run(tmp_path: pathlib.Path) -> Run:
    return Run(run_id=new_run_id("slurmtest"), root=tmp_path / "store")


@pytest.fixture
def command_log(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> CommandLog:
    """Wrap sbatch and sacct so that each call is logged, then runs the real command."""
    bin_dir = tmp_path / "logged-bin"
    bin_dir.mkdir()
    log = tmp_path / "slurm-commands.log"
    for command in ("sbatch", "sacct"):
        real = shutil.which(command)
        assert real is not None, f"{command} is not installed: {START}"
        wrapper = bin_dir / command
        wrapper.write_text(f'#!/bin/sh\necho "{command} $*" >> "{log}"\nexec "{real}" "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return CommandLog(log)


@pytest.fixture(scope="session")
def clean_adoptable(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[str], dict[str, list[str]]]:
    """The adoption tests' pipeline run once, unkilled: the tables every case must end equal to.

    Run on the local backend: keys and artifact ids never depend on where units ran.
    """
    from adoption_runs import finish_pipeline, tables

    base = tmp_path_factory.mktemp("clean")
    _, summary = finish_pipeline(base / "store", base / "ran", "local")
    assert summary["overall_success"] is True, summary
    return tables(base / "store")


@pytest.fixture(autouse=True)
def _no_run_left_behind() -> Iterator[None]:
    """A test that failed half-way through a chain of runs leaves none of them running."""
    yield
    from adoption_runs import stop_started

    stop_started()
