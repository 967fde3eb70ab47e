"""Wave requests turned into submitit's sbatch parameters, and waves split: no cluster needed."""

import pytest

from stemma.core.backends.base import WaveRequest
from stemma.slurm.sbatch_options import split_wave, submitit_parameters, time_limit_minutes


def _request(**options: object) -> WaveRequest:
    fields: dict[str, object] = {
        "job_name": "stemma-ab12cd34-s2-transform",
        "run_id": "first_20261129_101500_ab12cd34",
        "run_tag": "stemma-ab12cd34",
        "step_number": 2,
        "max_parallel": 8,
    }
    return WaveRequest(**{**fields, **options})  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("30", 30),
        ("30:30", 31),
        ("01:00:00", 60),
        ("1-00", 1440),
        ("1-02:30", 1590),
        ("0-00:00:01", 1),
        ("2-00:00:00", 2880),
    ],
)
def test_time_limit_minutes_reads_every_slurm_form(text: str, minutes: int) -> None:
    assert time_limit_minutes(text) == minutes


@pytest.mark.parametrize("text", ["1h", "", "1:2:3:4", "-5"])
def test_time_limit_minutes_rejects_other_forms_naming_the_accepted_ones(text: str) -> None:
    with pytest.raises(ValueError, match="HH:MM:SS"):
        time_limit_minutes(text)


def test_submitit_parameters_carry_resources_throttle_and_name() -> None:
    parameters = submitit_parameters(
        _request(cpus=4, memory_gb=1.5, gpus=2, time_limit="02:00:00", extra={"partition": "gpu"})
    )
    assert parameters["job_name"] == "stemma-ab12cd34-s2-transform"
    assert parameters["cpus_per_task"] == 4
    assert parameters["mem"] == "1536M"
    assert parameters["gres"] == "gpu:2"
    assert parameters["time"] == 120
    assert parameters["array_parallelism"] == 8
    assert parameters["partition"] == "gpu"


def test_submitit_parameters_pass_unknown_extras_as_sbatch_options() -> None:
    parameters = submitit_parameters(_request(extra={"reservation": "r1", "mail_type": "END"}))
    assert parameters["additional_parameters"] == {"reservation": "r1"}
    assert parameters["mail_type"] == "END"


def test_submitit_parameters_refuse_extras_the_backend_sets_itself() -> None:
    with pytest.raises(ValueError, match="array"):
        submitit_parameters(_request(extra={"array": "0-3"}))


def test_submitit_parameters_refuse_impossible_resources() -> None:
    with pytest.raises(ValueError, match="cpus >= 1"):
        submitit_parameters(_request(cpus=0))


@pytest.mark.parametrize(
    ("count", "size", "lengths"),
    [(10, 4, [4, 4, 2]), (1000, 1001, [1000]), (3, 1, [1, 1, 1]), (0, 5, [])],
)
def test_split_wave_keeps_every_array_within_max_array_size(
    count: int, size: int, lengths: list[int]
) -> None:
    arrays = split_wave(count, size)
    assert [len(indices) for indices in arrays] == lengths
    assert [i for indices in arrays for i in indices] == list(range(count))
