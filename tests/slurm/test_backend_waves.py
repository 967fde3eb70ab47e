"""The slurm backend's waves on the real local cluster: arrays, results, errors, crashes."""

import json
import pathlib
from concurrent.futures import Future
from typing import Any

import pytest
import slurm_tasks
from slurm_testing import CommandLog, Run

from stemma.core.backends.base import Backend, WorkerCrashedError
from stemma.core.backends.registry import open_backend
from stemma.slurm import ClusterUnavailableError, SlurmBackend, SubmissionError

pytestmark = pytest.mark.slurm

TIMEOUT = 120


def _results(futures: list[Future[Any]]) -> list[Any]:
    return [future.result(timeout=TIMEOUT) for future in futures]


def _ledger(run: Run) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run.ledger.read_text().splitlines()]


def test_slurm_backend_is_registered_under_its_entry_point(slurm_cluster: None) -> None:
    backend = open_backend("slurm", max_workers=3)
    assert isinstance(backend, SlurmBackend)
    assert isinstance(backend, Backend)
    assert backend.queues_whole_waves is True


def test_slurm_wave_returns_results_in_order_from_one_sbatch_call(
    backend: SlurmBackend, run: Run, command_log: CommandLog
) -> None:
    futures = backend.submit_wave(slurm_tasks.square, list(range(6)), run.request(max_parallel=2))
    assert _results(futures) == [n * n for n in range(6)]
    assert backend.job_states(1) == {"COMPLETED": 6}
    sbatch = command_log.calls("sbatch")
    assert len(sbatch) == 1
    script = pathlib.Path(sbatch[0][-1]).read_text()
    assert "#SBATCH --array=0-5%2" in script
    assert f"#SBATCH --job-name={run.tag}-s1-test" in script
    [entry] = _ledger(run)
    assert entry["elements"] == 6
    assert entry["job_name"] == f"{run.tag}-s1-test"


def test_slurm_wave_above_max_array_size_is_split_and_polled_in_one_sacct_call(
    slurm_cluster: None, run: Run, command_log: CommandLog
) -> None:
    backend = SlurmBackend(max_array_size=2)
    try:
        futures = backend.submit_wave(slurm_tasks.square, list(range(5)), run.request())
        assert _results(futures) == [n * n for n in range(5)]
    finally:
        backend.terminate(grace_seconds=0)
    assert len(command_log.calls("sbatch")) == backend.sbatch_calls == 3
    ledger = _ledger(run)
    assert [entry["elements"] for entry in ledger] == [2, 2, 1]
    sacct = command_log.calls("sacct")
    assert len(sacct) == backend.poller.status_queries >= 1
    first_ids = set(sacct[0][sacct[0].index("-j") + 1].split(","))
    assert first_ids == {entry["job_id"] for entry in ledger}


def test_slurm_unit_exception_reaches_the_future_with_its_job_traceback(
    backend: SlurmBackend, run: Run
) -> None:
    [good, bad] = backend.submit_wave(
        slurm_tasks.fail, ["row 7 is corrupt", "row 8 is corrupt"], run.request()
    )
    for future, row in ((good, 7), (bad, 8)):
        error = future.exception(timeout=TIMEOUT)
        assert isinstance(error, ValueError)
        assert str(error) == f"row {row} is corrupt"
        assert "Traceback in the SLURM job" in "".join(getattr(error, "__notes__", []))


def test_slurm_killed_job_becomes_a_worker_crash_naming_state_and_log(
    backend: SlurmBackend, run: Run
) -> None:
    [future] = backend.submit_wave(slurm_tasks.die, [None], run.request())
    error = future.exception(timeout=TIMEOUT)
    assert isinstance(error, WorkerCrashedError)
    assert "ended FAILED" in str(error) or "ended CANCELLED" in str(error)
    assert str(run.root / "logs" / "slurm" / run.run_id) in str(error)


def test_slurm_single_submit_runs_one_job(backend: SlurmBackend) -> None:
    assert backend.submit(slurm_tasks.square, 7).result(timeout=TIMEOUT) == 49


def test_slurm_without_slurm_commands_says_how_to_start_a_cluster(
    run: Run, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ClusterUnavailableError, match=r"slurm-dev-cluster\.sh start"):
        SlurmBackend().submit_wave(slurm_tasks.square, [1], run.request())


def test_slurm_wave_sbatch_refuses_is_a_submission_error_naming_the_job(
    backend: SlurmBackend, run: Run
) -> None:
    request = run.request(extra={"partition": "no-such-partition"})
    with pytest.raises(SubmissionError, match=rf"sbatch refused {run.tag}-s1-test .*partition"):
        backend.submit_wave(slurm_tasks.square, [1, 2], request)
