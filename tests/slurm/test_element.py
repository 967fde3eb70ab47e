"""What an element returns and how its result file is read: no cluster needed."""

import pathlib
import threading

import pytest
from submitit.core.utils import cloudpickle_dump

from stemma.core.backends.base import WorkerCrashedError
from stemma.slurm.element import (
    ElementFiles,
    ElementResult,
    RemoteUnitError,
    crash_error,
    read_outcome,
    run_element,
    worker_log_text,
)


def _files(tmp_path: pathlib.Path) -> ElementFiles:
    return ElementFiles(
        job_id="12_3",
        result=tmp_path / "12_3_0_result.pkl",
        stdout=tmp_path / "12_3_0_log.out",
        stderr=tmp_path / "12_3_0_log.err",
    )


def _raise_value_error(message: str) -> None:
    raise ValueError(message)


def _raise_unpicklable(_: object) -> None:
    class LocalError(Exception):
        def __init__(self) -> None:
            super().__init__("no pickling")
            self.lock = threading.Lock()

    raise LocalError


def test_run_element_returns_the_units_exception_with_its_traceback_as_a_note() -> None:
    result = run_element(_raise_value_error, "row 7")
    assert isinstance(result.error, ValueError)
    assert "Traceback in the SLURM job" in result.error.__notes__[0]


def test_run_element_replaces_an_unpicklable_exception_keeping_its_type_and_text() -> None:
    result = run_element(_raise_unpicklable, None)
    assert isinstance(result.error, RemoteUnitError)
    assert "LocalError: no pickling" in str(result.error)


def test_read_outcome_gives_the_value_or_the_units_exception(tmp_path: pathlib.Path) -> None:
    files = _files(tmp_path)
    cloudpickle_dump(("success", ElementResult(value=49)), files.result)
    assert read_outcome(files) == (49, None)
    cloudpickle_dump(("success", ElementResult(error=KeyError("k"))), files.result)
    value, error = read_outcome(files)
    assert value is None
    assert isinstance(error, KeyError)


def test_read_outcome_of_a_job_level_failure_is_a_worker_crash(tmp_path: pathlib.Path) -> None:
    files = _files(tmp_path)
    cloudpickle_dump(("error", "Traceback: ModuleNotFoundError: tasks"), files.result)
    _, error = read_outcome(files)
    assert isinstance(error, WorkerCrashedError)
    assert "ModuleNotFoundError: tasks" in str(error)


@pytest.mark.parametrize(
    ("state", "hint"),
    [("TIMEOUT", "time_limit"), ("OUT_OF_MEMORY", "memory_gb"), ("NODE_FAIL", "rerun")],
)
def test_crash_error_names_state_log_and_fix(tmp_path: pathlib.Path, state: str, hint: str) -> None:
    files = _files(tmp_path)
    files.stderr.write_text("line 1\nkilled here\n")
    error = crash_error(files, state=state, exit_code=-9)
    assert f"SLURM job 12_3 ended {state} (exit code -9)" in str(error)
    assert hint in str(error)
    assert str(files.stderr) in str(error)
    assert str(error).endswith("killed here")
    assert error.exit_codes == [-9]


def test_worker_log_text_holds_both_streams_under_their_names(tmp_path: pathlib.Path) -> None:
    files = _files(tmp_path)
    assert worker_log_text(files) == ""
    files.stdout.write_text("out\n")
    files.stderr.write_text("err\n")
    assert worker_log_text(files) == f"==> {files.stdout} <==\nout\n==> {files.stderr} <==\nerr"
