"""What squeue's answers mean: gone ids are "nothing held", a failing controller is never that.

Read as "nothing held", a squeue that failed under load would fail running elements as ended,
or let a rerun submit again work it could have adopted. The real cluster answers for ids it
does not know; a controller that times out is a wrapper in front of the real squeue.
"""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest
from slurm_testing import flaky_command

from stemma.slurm.commands import squeue_lines
from stemma.slurm.errors import ClusterUnavailableError

pytestmark = pytest.mark.slurm


def _flaky_squeue(bin_dir: pathlib.Path, failures: int) -> pathlib.Path:
    """A squeue that fails as a loaded slurmctld does ``failures`` times, then is the real one."""
    error = "slurm_load_jobs error: Socket timed out on send/recv operation"
    return flaky_command(bin_dir, "squeue", failures, error)


def _submit_held() -> str:
    done = subprocess.run(
        ["sbatch", "--parsable", "--hold", "-o", "/dev/null", "--wrap", "true"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip().split(";")[0]


def test_ids_the_controller_no_longer_holds_read_as_nothing_held(slurm_cluster: None) -> None:
    assert squeue_lines(["999999"]) == []  # squeue itself fails for one unknown id
    assert squeue_lines(["999999", "999998"]) == []


def test_a_controller_that_times_out_once_is_asked_again(
    slurm_cluster: None, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _submit_held()
    try:
        calls = _flaky_squeue(tmp_path / "bin", failures=1)
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
        assert squeue_lines([job]) == [f"{job}|PENDING|"]
        assert len(calls.read_text().splitlines()) == 2
    finally:
        subprocess.run(["scancel", job], check=False, timeout=60)


def test_a_controller_that_keeps_failing_raises_naming_its_error(
    slurm_cluster: None, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _flaky_squeue(tmp_path / "bin", failures=100)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    with pytest.raises(ClusterUnavailableError, match="Socket timed out on send/recv"):
        squeue_lines(["1"])
