"""Bad input to the public entry points: only documented errors, and nothing written.

Property-based (hypothesis) over params, roles, ids, paths, versions, names and levels. Each
test shares one root across its examples and checks at the end that not one step event, staged
bundle or run folder was written for any of the refused calls.
"""

from __future__ import annotations

import pathlib
import re
import string
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stemma.core import apply, lower
from stemma.core.errors import LoweringError, StemmaError
from stemma.core.examples import DataGenerator, Transform, Wait
from stemma.core.front.pipeline import Pipeline
from stemma.core.live import request_cancel
from stemma.core.operations import Execution, Resources
from stemma.core.store import open_run_store

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
GENERATOR_PARAMS = set(DataGenerator.Params.model_fields)
KNOWN_SETTINGS = set(Resources.model_fields) | set(Execution.model_fields)
VALID_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.lists(st.integers()),
)


@pytest.fixture
def pipeline(tmp_path: pathlib.Path) -> Iterator[Pipeline]:
    created = Pipeline.create("bad-input", root=tmp_path, max_workers=1)
    yield created
    created.finalize()
    assert open_run_store(tmp_path).step_events(created.run_id) == []
    staged = [p for p in (tmp_path / "staging").rglob("*") if p.is_file()]
    assert staged == [], "a refused step staged something"


@SETTINGS
@given(key=st.text(min_size=1, max_size=12).filter(lambda k: k not in GENERATOR_PARAMS))
def test_unknown_param_is_refused_by_name(pipeline: Pipeline, key: str) -> None:
    with pytest.raises(ValueError, match="count") as info:  # the accepted params are listed
        pipeline.submit(DataGenerator, params={key: 1})
    assert repr(key) in str(info.value) or key in str(info.value)


@SETTINGS
@given(value=st.one_of(st.text(alphabet=string.ascii_letters, min_size=1), st.lists(ANY_VALUE)))
def test_mistyped_param_is_refused_naming_the_field(pipeline: Pipeline, value: object) -> None:
    with pytest.raises(ValueError, match="count"):
        pipeline.submit(DataGenerator, params={"count": value})


@SETTINGS
@given(
    section=st.sampled_from(["resources", "execution"]),
    key=st.text(min_size=1, max_size=12).filter(lambda k: k not in KNOWN_SETTINGS),
    value=ANY_VALUE,
)
def test_unknown_settings_are_refused(
    pipeline: Pipeline, section: str, key: str, value: object
) -> None:
    given = {key: value}
    resources, execution = (given, None) if section == "resources" else (None, given)
    with pytest.raises(ValueError, match=rf"unknown {section} key .*; accepted: "):
        pipeline.submit(
            Wait, inputs={"dataset": ["0" * 32]}, resources=resources, execution=execution
        )


@SETTINGS
@given(role=st.text(min_size=1, max_size=12).filter(lambda r: r != "dataset"))
def test_unknown_role_is_refused_with_the_declared_roles(pipeline: Pipeline, role: str) -> None:
    with pytest.raises(ValueError, match="declared roles: dataset"):
        pipeline.submit(Transform, inputs={role: ["0" * 32]})


@SETTINGS
@given(ids=st.lists(st.text(max_size=40), min_size=1, max_size=4))
def test_malformed_artifact_ids_are_refused(pipeline: Pipeline, ids: list[str]) -> None:
    if all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids):
        return  # well-formed: not this property's business
    with pytest.raises(ValueError, match="not artifact ids"):
        pipeline.submit(Transform, inputs={"dataset": ids})


@SETTINGS
@given(names=st.lists(st.text(alphabet=string.ascii_letters + "/._", min_size=1), min_size=1))
def test_missing_or_unreadable_paths_are_refused(
    pipeline: Pipeline, tmp_path: pathlib.Path, names: list[str]
) -> None:
    paths = [f"{tmp_path}/nowhere/{name}" for name in names]
    with pytest.raises(ValueError, match="nowhere"):
        pipeline.submit(Wait, inputs=paths)


def test_a_directory_given_as_a_file_is_refused(pipeline: Pipeline, tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match="is not a file"):
        pipeline.submit(Wait, inputs=[str(tmp_path)])


@SETTINGS
@given(name=st.text(max_size=140))
def test_pipeline_names_are_one_plain_segment(tmp_path: pathlib.Path, name: str) -> None:
    if VALID_NAME.fullmatch(name):
        return  # valid names are exercised everywhere else
    with pytest.raises(ValueError, match="pipeline name"):
        Pipeline.create(name, root=tmp_path / "root")
    assert not (tmp_path / "root").exists()


@SETTINGS
@given(level=st.one_of(st.integers(), st.text(max_size=10)), run_id=st.text(max_size=30))
def test_cancel_requests_refuse_bad_levels_and_ids(
    tmp_path: pathlib.Path, level: object, run_id: str
) -> None:
    try:
        request_cancel(tmp_path, run_id, level)  # pyright: ignore[reportArgumentType]
    except (ValueError, FileNotFoundError):
        pass
    else:
        pytest.fail(f"cancel({run_id!r}, {level!r}) was accepted for a run that does not exist")
    assert not (tmp_path / "runs").exists()


def _noop(x: int) -> int:
    return x


@SETTINGS
@given(version=st.text(max_size=20), name=st.text(max_size=20))
def test_apply_refuses_bad_versions_and_names_with_lowering_errors(version: str, name: str) -> None:
    try:
        lower(apply(name, _noop, version=version, x=1))
    except LoweringError:
        return
    except StemmaError as error:  # every refusal must be a documented lowering error
        pytest.fail(f"undocumented error {type(error).__name__}: {error}")
    assert version not in ("", ".", "..")
    assert "/" not in version
    assert name
    assert all(segment not in ("", ".", "..") for segment in name.split("/"))
