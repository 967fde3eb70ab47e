"""A root this process cannot write: what is built is answered, what must run is refused first.

The read-only root is real: a read-only bind mount of a root built beforehand (the tests run as
root, and root ignores permission bits, not a read-only mount); run as another user, the same
root with its write bits taken away. Both front doors, both stores.
"""

from __future__ import annotations

import gc
import os
import pathlib
import stat
import subprocess
from collections.abc import Callable, Iterator

import pytest

from stemma.core import OUT, ArtifactStep, StepFailedError, apply, run
from stemma.core.errors import ReadOnlyRootError
from stemma.core.examples import DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.store.locations import RootLayout

CALLS_ENV = "STEMMA_TEST_CALLS"
"""Where the steps' functions note each call."""
ReadOnly = Callable[[pathlib.Path], pathlib.Path]


def _count(name: str) -> None:
    with (pathlib.Path(os.environ[CALLS_ENV]) / name).open("a") as stream:
        stream.write("x")


def _calls(name: str) -> int:
    file = pathlib.Path(os.environ[CALLS_ENV]) / name
    return len(file.read_text()) if file.exists() else 0


def make(n: int, out_path: str) -> int:
    _count("make")
    pathlib.Path(out_path).write_text(str(n))
    return n


def double(source: str, out_path: str) -> int:
    _count("double")
    value = 2 * int(pathlib.Path(source).read_text())
    pathlib.Path(out_path).write_text(str(value))
    return value


def _graph(n: int = 3, version: str = "v1") -> list[ArtifactStep]:
    made = apply("ro/make", make, version="v1", n=n, out_path=OUT)
    return [made, apply("ro/double", double, version=version, source=made, out_path=OUT)]


@pytest.fixture(autouse=True)
def _calls_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


@pytest.fixture(params=["delta", "sqlite"])
def store_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    kind = str(request.param)
    monkeypatch.setenv("STEMMA_STORE", kind)
    return kind


@pytest.fixture
def read_only(tmp_path: pathlib.Path) -> Iterator[ReadOnly]:
    """Makes a read-only view of a root: a read-only bind mount (as root), else no write bits."""
    mounted: list[pathlib.Path] = []
    locked: list[pathlib.Path] = []

    def view(root: pathlib.Path) -> pathlib.Path:
        if os.geteuid() != 0:  # permission bits hold for everyone but root
            for directory in [root, *(p for p in root.rglob("*") if p.is_dir())]:
                directory.chmod(directory.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP))
                locked.append(directory)
            return root
        target = tmp_path / f"read-only view {len(mounted)}"
        target.mkdir()
        subprocess.run(["mount", "--bind", str(root), str(target)], check=True)
        mounted.append(target)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], check=True)
        return target

    yield view
    gc.collect()  # the SQLite store's connections to the view close with their store
    for target in reversed(mounted):
        if subprocess.run(["umount", str(target)], check=False).returncode != 0:
            # still open somewhere (a worker exiting): detach now, unmounted once closed
            subprocess.run(["umount", "--lazy", str(target)], check=True)
    for directory in locked:
        directory.chmod(directory.stat().st_mode | stat.S_IWUSR)


def _cannot_write(directory: pathlib.Path) -> None:
    with pytest.raises(OSError, match=r"Read-only file system|Permission denied"):
        (directory / "probe").write_text("x")


# ---------------------------------------------------------------- lazy steps


def test_lazy_rerun_on_a_read_only_root_answers_every_built_step(
    tmp_path: pathlib.Path, read_only: ReadOnly, store_kind: str
) -> None:
    built = run(*_graph(), root=tmp_path / "root", backend="local-thread")
    ro = read_only(tmp_path / "root")
    _cannot_write(ro)

    again = run(*_graph(), root=ro, backend="local-thread")

    assert [a.value for a in again] == [a.value for a in built] == [3, 6]
    assert [a.artifact_id for a in again] == [a.artifact_id for a in built]
    assert all(a.cached for a in again)
    assert (_calls("make"), _calls("double")) == (1, 1)  # nothing ran again
    assert again[1].path().read_text() == "6"  # its output, read through the view


@pytest.mark.parametrize("version", ["v2", "dev"])  # (dev: a step that takes no lease)
def test_lazy_step_to_build_on_a_read_only_root_is_refused_before_it_runs(
    tmp_path: pathlib.Path, read_only: ReadOnly, store_kind: str, version: str
) -> None:
    run(*_graph(), root=tmp_path / "root", backend="local-thread")
    ro = read_only(tmp_path / "root")

    with pytest.raises(StepFailedError) as raised:
        run(*_graph(version=version), root=ro, backend="local-thread")

    assert raised.value.failed == ["ro/double"]
    cause = raised.value.__cause__
    assert isinstance(cause, ReadOnlyRootError)
    assert (cause.root, cause.path) == (ro, ro)
    assert f"under the stemma root {ro}" in str(cause)
    assert "give the run a root you can write" in str(cause)  # and what to do
    assert (_calls("make"), _calls("double")) == (1, 1)  # the refused step never started


# ---------------------------------------------------------------- the Pipeline


def _pipeline(root: pathlib.Path, *, scale: float = 2.0, skip_cache: bool = False) -> Pipeline:
    pipeline = Pipeline.create("read-only", root=root, backend="local", max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    assert generated.success
    pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": scale},
        skip_cache=skip_cache,
    )
    return pipeline


def test_pipeline_rerun_on_a_read_only_root_answers_every_cached_step(
    tmp_path: pathlib.Path, read_only: ReadOnly, store_kind: str
) -> None:
    first = _pipeline(tmp_path / "root")
    assert first.finalize()["overall_success"] is True
    ro = read_only(tmp_path / "root")

    pipeline = Pipeline.create("read-only", root=ro, backend="local", max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    transformed = pipeline.run(
        Transform, inputs={"dataset": generated.output("datasets")}, params={"scale": 2.0}
    )
    summary = pipeline.finalize()

    assert summary["overall_success"] is True, summary
    assert [generated.metadata["cache"], transformed.metadata["cache"]] == ["step", "step"]
    assert len(pipeline.artifact_ids(transformed.output("dataset"))) == 2
    assert not (ro / "runs" / pipeline.run_id).exists()  # unwatched: nothing was written


@pytest.mark.parametrize(
    ("scale", "skip_cache"), [(3.0, False), (2.0, True)], ids=["new-params", "skip-cache"]
)
def test_pipeline_step_to_run_on_a_read_only_root_raises_naming_the_path(
    tmp_path: pathlib.Path, read_only: ReadOnly, store_kind: str, scale: float, skip_cache: bool
) -> None:
    _pipeline(tmp_path / "root").finalize()
    ro = read_only(tmp_path / "root")

    with pytest.raises(ReadOnlyRootError) as raised:
        _pipeline(ro, scale=scale, skip_cache=skip_cache)

    assert (raised.value.root, raised.value.path) == (ro, ro)
    assert str(ro) in str(raised.value)
    assert "give the run a root you can write" in str(raised.value)


# ---------------------------------------------------------------- where the check looks


def test_root_layout_names_the_first_place_under_a_root_it_cannot_write(
    tmp_path: pathlib.Path, read_only: ReadOnly
) -> None:
    (tmp_path / "root" / "staging").mkdir(parents=True)
    assert RootLayout(tmp_path / "root").unwritable() is None
    assert RootLayout(tmp_path / "not yet").unwritable() is None  # made when first written

    ro = read_only(tmp_path / "root")

    assert RootLayout(ro).unwritable() == ro
    assert RootLayout(ro / "inside" / "new").unwritable() == ro  # where it would be made
