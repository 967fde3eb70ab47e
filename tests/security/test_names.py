"""Names that become file, folder or job names: refused naming the field, or kept in their folder.

Step names, versions, pipeline names, run ids, operation names and SLURM job names are tried
with ``../``, NUL, line breaks, 300+ characters, undecodable bytes (as ``surrogateescape``
gives them) and leading dashes.
"""

import os
import pathlib
import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stemma.core import OUT, LoweringError, apply
from stemma.core.errors import OperationDefinitionError
from stemma.core.operations.definition import OperationDefinition
from stemma.core.run_ids import check_pipeline_name, check_run_id, job_name, new_run_id
from stemma.core.store.staging.tree import step_dir_name

_NASTY = [
    "../x",
    "..",
    "a/../../b",
    "/abs",
    "a\x00b",
    "a\nb",
    "line\r\n#SBATCH --uid=0",
    "-rf",
    "--root=/etc",
    "x" * 300,
    "a/" * 150 + "b",
    "é" * 150,
    b"caf\xe9".decode("utf-8", "surrogateescape"),
    "name ",
    "\t",
    "ok/./x",
]
_names = st.one_of(
    st.sampled_from(_NASTY),
    st.text(max_size=30),
    st.lists(
        st.sampled_from(["a", "..", "/", "\n", "\x00", "-", "é", "\udce9", " "]), max_size=12
    ).map("".join),
)
_JOB_NAME = re.compile(r"stemma-[A-Za-z0-9_.-]{1,8}-s\d+-[A-Za-z0-9_.]*")
_RUN_ID = "p_20261202_101500_ab12cd34"


def _write(out: str) -> None:
    pathlib.Path(out).write_text("x")


def _inside(folder: pathlib.Path, relative: str) -> bool:
    resolved = pathlib.Path(os.path.normpath(folder / relative))
    return resolved.is_relative_to(folder) and resolved != folder


def _fits_a_filesystem(relative: str) -> bool:
    return all(len(part.encode("utf-8", "surrogatepass")) <= 255 for part in relative.split("/"))


def _refusal(call: Callable[[], object], kind: type[Exception]) -> str | None:
    """The one-line message ``call`` raised ``kind`` with; None when it did not raise."""
    try:
        call()
    except kind as error:
        message = str(error)
    else:
        return None
    assert "\n" not in message
    return message


def _valid(name: str, version: str) -> bool:
    refused = _refusal(lambda: apply(name=name, fn=_write, version=version, out=OUT), LoweringError)
    assert refused is None or "step name" in refused or "version" in refused
    return refused is None


@settings(max_examples=200, deadline=None)
@given(name=_names, version=st.one_of(st.sampled_from(["v0", *_NASTY]), st.text(max_size=12)))
def test_step_name_and_version_are_refused_or_name_folders_inside_the_root(
    name: str, version: str
) -> None:
    root = pathlib.Path("/r")
    step = apply(name=name, fn=_write, version=version, out=OUT) if _valid(name, version) else None
    if step is None:
        return
    spec = step.lower()
    output = spec.output_relpath
    assert _inside(root / "outputs", output.removeprefix("outputs/"))
    assert _fits_a_filesystem(output)
    staging = step_dir_name(3, name)
    assert "/" not in staging
    assert _inside(root / "staging", staging)
    assert _fits_a_filesystem(staging)
    assert _JOB_NAME.fullmatch(job_name(_RUN_ID, 3, name))


@settings(max_examples=200, deadline=None)
@given(name=_names)
def test_pipeline_name_is_refused_or_gives_a_run_id_that_is_one_plain_segment(name: str) -> None:
    refused = _refusal(lambda: check_pipeline_name(name), ValueError)
    if refused is not None:
        assert "pipeline name" in refused
        return
    run_id = new_run_id(name)
    check_run_id(run_id)
    assert _inside(pathlib.Path("/r/runs"), run_id)
    assert not run_id.startswith("-")


@settings(max_examples=200, deadline=None)
@given(run_id=_names)
def test_run_id_is_refused_or_one_plain_segment(run_id: str) -> None:
    refused = _refusal(lambda: check_run_id(run_id), ValueError)
    if refused is not None:
        assert "run id" in refused
        return
    assert _inside(pathlib.Path("/r/runs"), run_id)
    assert _fits_a_filesystem(run_id)
    assert not run_id.startswith(("-", "."))
    assert _JOB_NAME.fullmatch(job_name(run_id, 1, "step"))


@settings(max_examples=200, deadline=None)
@given(label=_names)
def test_job_name_holds_only_what_sbatch_and_a_file_name_take(label: str) -> None:
    name = job_name(_RUN_ID, 7, label)
    assert _JOB_NAME.fullmatch(name)
    assert name.startswith("stemma-")  # never taken as an option


@pytest.mark.parametrize("name", [*_NASTY, "Tokenize\n", "9lives", "-op"])
def test_operation_name_that_is_not_a_plain_segment_is_refused_naming_it(name: str) -> None:
    with pytest.raises(OperationDefinitionError, match=r"name .* must (be|match)"):
        type("Nasty", (OperationDefinition,), {"name": name, "__module__": __name__})
