"""A pickle stemma loads from a folder another user could write is loaded with a warning."""

import os
import pathlib
import warnings

import pytest
from submitit.core.utils import cloudpickle_dump

from stemma.core.shared_paths import WritableByOthersWarning, writable_by_others
from stemma.slurm.element import ElementFiles, ElementResult, read_outcome

_NOBODY = 65534


def _result_in(folder: pathlib.Path) -> ElementFiles:
    folder.mkdir(parents=True, exist_ok=True)
    files = ElementFiles(
        job_id="7_0",
        result=folder / "7_0_0_result.pkl",
        stdout=folder / "7_0_0_log.out",
        stderr=folder / "7_0_0_log.err",
    )
    cloudpickle_dump(("success", ElementResult(value=42)), files.result)
    return files


def _open_to_others(path: pathlib.Path) -> None:
    path.chmod(0o777)


def _owned_by_nobody(path: pathlib.Path) -> None:
    os.chown(path, _NOBODY, -1)


def _writable_by_a_foreign_group(path: pathlib.Path) -> None:
    os.chown(path, -1, _NOBODY)
    path.chmod(0o775)


@pytest.mark.parametrize("share", [_open_to_others, _owned_by_nobody, _writable_by_a_foreign_group])
@pytest.mark.parametrize("where", ["root", "logs/slurm/run-1", "the file"])
def test_read_outcome_from_a_place_others_can_write_warns_naming_it_and_the_fix(
    tmp_path: pathlib.Path, share: object, where: str
) -> None:
    root = tmp_path / f"root-{where.replace('/', '-').replace(' ', '-')}"
    files = _result_in(root / "logs" / "slurm" / "run-1")
    shared = {"root": root, "the file": files.result}.get(where, files.result.parent)
    assert callable(share)
    share(shared)
    with pytest.warns(WritableByOthersWarning) as caught:
        assert read_outcome(files) == (42, None)
    message = str(caught[0].message)
    assert str(shared) in message
    assert f"chmod go-w {shared}" in message


def test_read_outcome_from_a_root_of_ones_own_loads_without_a_word(tmp_path: pathlib.Path) -> None:
    files = _result_in(tmp_path / "root" / "logs" / "slurm" / "run-1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_outcome(files) == (42, None)
    assert writable_by_others(files.result) is None


def test_read_outcome_below_a_sticky_world_writable_folder_is_trusted(
    tmp_path: pathlib.Path,
) -> None:
    # /tmp's shape: others may add entries there, but not rename or replace this user's.
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    shared_tmp.chmod(0o1777)
    files = _result_in(shared_tmp / "root" / "logs" / "slurm" / "run-1")
    assert writable_by_others(files.result) is None


def test_warning_is_given_once_per_place(tmp_path: pathlib.Path) -> None:
    files = _result_in(tmp_path / "root" / "logs" / "slurm" / "run-1")
    _open_to_others(tmp_path / "root")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            read_outcome(files)
    assert len([w for w in caught if w.category is WritableByOthersWarning]) == 1


def test_slurm_wave_into_a_log_folder_others_can_write_warns_before_anything_is_submitted(
    tmp_path: pathlib.Path,
) -> None:
    # The jobs unpickle their units from the log folder; the option refused below stops the
    # wave after the warning and before sbatch, so no cluster is needed.
    from stemma.core.backends.base import WaveRequest
    from stemma.slurm import SlurmBackend

    log_dir = tmp_path / "root" / "logs" / "slurm" / "run-1"
    log_dir.mkdir(parents=True)
    _open_to_others(log_dir)
    request = WaveRequest(
        job_name="stemma-ab12cd34-s1-step",
        run_id="p_20261202_101500_ab12cd34",
        run_tag="stemma-ab12cd34",
        step_number=1,
        max_parallel=1,
        log_dir=str(log_dir),
        extra={"reservation": "r1\nid"},
    )
    backend = SlurmBackend()
    with (
        pytest.warns(WritableByOthersWarning, match="pickled units"),
        pytest.raises(ValueError, match="line break"),
    ):
        backend.submit_wave(abs, [1], request)
    assert list(log_dir.iterdir()) == []
