"""sacct and squeue lines parsed into element phases, without a cluster."""

import pytest

from stemma.slurm.job_states import (
    Phase,
    expand_job_ids,
    parse_exit_code,
    parse_sacct,
    state_of,
)


@pytest.mark.parametrize(
    ("text", "code"), [("0:0", 0), ("1:0", 1), ("0:15", -15), ("0:9", -9), ("", 0), ("x", None)]
)
def test_exit_code_is_negative_for_a_signal(text: str, code: int | None) -> None:
    assert parse_exit_code(text) == code


def test_expand_job_ids_expands_a_pending_range_without_its_throttle() -> None:
    assert expand_job_ids("12_[1,3-5%2]") == ["12_1", "12_3", "12_4", "12_5"]
    assert expand_job_ids("12_7") == ["12_7"]
    assert expand_job_ids("12") == ["12"]


def test_parse_sacct_gives_each_element_its_phase() -> None:
    states = parse_sacct(
        [
            "40_0|COMPLETED|0:0",
            "40_1|RUNNING|0:0",
            "40_2|CANCELLED by 0|0:15",
            "40_[3-4%2]|PENDING|0:0",
            "41|TIMEOUT|0:0",
        ]
    )
    phases = {job_id: state.phase for job_id, state in states.items()}
    assert phases == {
        "40_0": Phase.ENDED,
        "40_1": Phase.STARTED,
        "40_2": Phase.ENDED,
        "40_3": Phase.WAITING,
        "40_4": Phase.WAITING,
        "41": Phase.ENDED,
    }
    assert states["40_2"].state == "CANCELLED"
    assert states["40_2"].exit_code == -15


def test_state_of_an_element_of_an_array_not_split_yet_is_the_arrays() -> None:
    states = parse_sacct(["50|PENDING|0:0"])
    state = state_of("50_3", states)
    assert state is not None
    assert state.phase is Phase.WAITING
    assert state_of("51_0", states) is None


def test_an_elements_own_line_wins_over_a_cancelled_range_that_names_it() -> None:
    states = parse_sacct(["60_[0-3%2]|CANCELLED by 0|0:0", "60_1|RUNNING|0:0"])
    assert states["60_1"].phase is Phase.STARTED
    assert not states["60_1"].inferred
    assert states["60_0"].phase is Phase.ENDED
    assert states["60_0"].inferred  # the poller confirms it with squeue before believing it
