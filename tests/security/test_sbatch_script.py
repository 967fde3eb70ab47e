"""No option, name or path stemma hands to sbatch can add a line to the job's script.

submitit writes each parameter as a ``#SBATCH --key='value'`` line of a bash script: a line
break in a key, a value or the log folder would end that comment and run the rest as a command.
"""

import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from submitit.slurm.slurm import _make_sbatch_string  # pyright: ignore[reportPrivateUsage]

from stemma.core.backends.base import WaveRequest
from stemma.slurm.sbatch_options import check_sbatch_text, submitit_parameters

_NASTY = [
    "r1\ntouch pwned #",
    "x\r\nid",
    "a\x00b",
    "a\x85b\u2028c",
    "--uid=0",
    "-",
    "../../etc",
    "é" * 300,
]
_texts = st.one_of(st.sampled_from(_NASTY), st.text(max_size=40))
_keys = st.one_of(
    st.sampled_from(["reservation", "comment", "mail-user", "qos", "x=y\nid\n#", "-", "a b"]),
    st.text(max_size=20),
)
_COMMAND = "python -u -m submitit.core._submit /log/folder"


def _request(extra: dict[str, str], job_name: str = "stemma-ab12cd34-s2-step") -> WaveRequest:
    return WaveRequest(
        job_name=job_name,
        run_id="p_20261202_101500_ab12cd34",
        run_tag="stemma-ab12cd34",
        step_number=2,
        max_parallel=4,
        extra=extra,
    )


def _commands(script: str) -> list[str]:
    """The script's lines bash runs (not blank, not a comment).

    Split at ``\n`` alone, as bash does (``str.splitlines`` would also split at ``\x85``).
    """
    return [line for line in script.split("\n") if line.strip() and not line.startswith("#")]


@settings(max_examples=150, deadline=None)
@given(extra=st.dictionaries(_keys, _texts, max_size=3), folder=_texts)
def test_sbatch_script_runs_only_stemmas_own_commands(extra: dict[str, str], folder: str) -> None:
    try:
        parameters = submitit_parameters(_request(extra), python_path="/site")
        check_sbatch_text("the SLURM log folder", folder)
    except ValueError as error:
        assert "\n" not in str(error)  # noqa: PT017 (one line, naming what to change)
        return
    script = _make_sbatch_string(
        command=_COMMAND, folder=f"/r/{folder}/%j", map_count=3, **parameters
    )
    commands = _commands(script)
    assert commands[:2] == ["export PYTHONPATH=/site", "export SUBMITIT_EXECUTOR=slurm"], script
    assert commands[2].startswith("srun --unbuffered")
    assert commands[2].endswith(_COMMAND)
    assert len(commands) == 3, script


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"reservation": "r1\ntouch pwned #"}, "sbatch option 'reservation' value"),
        ({"comment=x\nid\n#c": "y"}, "sbatch option name"),
        ({"account": "a\rb"}, "sbatch option 'account' value"),
    ],
)
def test_sbatch_option_with_a_line_break_is_refused_naming_it(
    extra: dict[str, str], field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        submitit_parameters(_request(extra))


def test_sbatch_log_folder_with_a_line_break_is_refused(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match="the SLURM log folder"):
        check_sbatch_text("the SLURM log folder", str(tmp_path / "a\necho hi #"))
