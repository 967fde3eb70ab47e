"""A root that is a file is refused as one, by every door, before any work.

The command line always said ``is a file, not a stemma root``; the Python API opened it as a
read-only root and failed the first step that ran (or planned on it as if it were empty).
"""

from __future__ import annotations

import multiprocessing
import pathlib
from collections.abc import Callable

import pytest

from stemma.core import (
    OUT,
    ArtifactStep,
    ExternalRun,
    NotARootError,
    Pipeline,
    StemmaError,
    apply,
    open_store,
    plan,
    resolve,
    run,
)
from tests.core.lazy_functions import CALLS_ENV, calls, write_json


@pytest.fixture(autouse=True)
def _calls_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


@pytest.fixture
def a_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "notes.txt"
    path.write_text("not a root")
    return path


def _step() -> ArtifactStep:
    return apply(name="data", fn=write_json, version="v0", data=[1], out_path=OUT)


DOORS: dict[str, Callable[[pathlib.Path], object]] = {
    "run": lambda root: run(_step(), root=root),
    "resolve": lambda root: resolve(_step(), root=root),
    "plan": lambda root: plan(_step(), root=root),
    "Pipeline.create": lambda root: Pipeline.create("p", root=root),
    "Pipeline.list_runs": lambda root: Pipeline.list_runs(root),
    "ExternalRun": lambda root: ExternalRun(root=root),
    "open_store": lambda root: open_store(root),
}


@pytest.mark.parametrize("door", sorted(DOORS))
def test_a_root_that_is_a_file_is_refused_naming_it_before_any_work(
    door: str, a_file: pathlib.Path
) -> None:
    with pytest.raises(NotARootError) as info:
        DOORS[door](a_file)
    assert str(info.value).startswith(f"{a_file} is a file, not a stemma root"), str(info.value)
    assert isinstance(info.value, StemmaError)
    assert isinstance(info.value, ValueError)
    assert calls() == {}  # no step ran
    assert a_file.read_text() == "not a root"
    assert multiprocessing.active_children() == []  # no worker was started


def test_a_root_below_a_file_is_refused_naming_the_file(a_file: pathlib.Path) -> None:
    with pytest.raises(NotARootError, match=r"is a file") as info:
        run(_step(), root=a_file / "root")
    assert str(a_file) in str(info.value)
    assert calls() == {}


def test_a_root_that_is_a_file_from_the_environment_is_refused(
    a_file: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEMMA_ROOT", str(a_file))
    with pytest.raises(NotARootError, match=r"is a file, not a stemma root.*STEMMA_ROOT"):
        resolve(_step())
