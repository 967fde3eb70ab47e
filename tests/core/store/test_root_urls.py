"""A root written as a URL is read as one: file:// is a local path; an object store's is refused
where no store here can keep it (tests/storage/object_roots run such roots on real servers).

Before, ``run(step, root="gs://bucket/prefix")`` made a folder ``./gs:/bucket/prefix`` and ran
there, silently.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core import OUT, ArtifactStep, Pipeline, RootURLError, apply, open_store, run
from tests.core.lazy_functions import CALLS_ENV, write_json


@pytest.fixture(autouse=True)
def _in_an_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))
    monkeypatch.delenv("STEMMA_ROOT", raising=False)
    monkeypatch.chdir(work)
    return work


def _step() -> ArtifactStep:
    return apply(name="urls/json", fn=write_json, version="v1", data={"a": 1}, out_path=OUT)


STORAGE_INSTALLED = importlib.util.find_spec("stemma.storage") is not None
"""Both ways are tested: this suite runs in the workspace and with stemma-core installed alone."""


@pytest.fixture
def refusal_here(monkeypatch: pytest.MonkeyPatch) -> str:
    """What refuses an object root in this environment, and the fix the refusal must name."""
    if STORAGE_INSTALLED:  # the Delta store could keep it: ask for the SQLite store instead
        monkeypatch.setenv("STEMMA_STORE", "sqlite")
        return "STEMMA_STORE=sqlite keeps roots on a filesystem; unset it"
    return "stemma-core alone keeps roots on a filesystem; pip install stemma-storage"


@pytest.mark.parametrize("root", ["gs://bucket/prefix", "s3://bucket", "az://container/a/b"])
def test_an_object_store_root_no_store_here_can_keep_is_refused_before_anything_is_written(
    root: str, refusal_here: str, tmp_path: Path
) -> None:
    with pytest.raises(RootURLError, match=root.split("://")[0] + "://") as raised:
        run(_step(), root=root)
    assert root.rstrip("/") in str(raised.value)
    assert refusal_here in str(raised.value)
    assert "nothing was written" in str(raised.value)
    assert list(Path.cwd().iterdir()) == []  # no ./gs:/bucket/prefix
    assert not (tmp_path / "state").exists()  # nor its local half


def test_an_object_store_root_from_the_environment_is_refused(
    monkeypatch: pytest.MonkeyPatch, refusal_here: str
) -> None:
    monkeypatch.setenv("STEMMA_ROOT", "s3://bucket/prefix")
    with pytest.raises(RootURLError, match="s3://bucket/prefix"):
        open_store()
    with pytest.raises(RootURLError, match="s3://bucket/prefix"):
        Pipeline.create("urls")
    assert list(Path.cwd().iterdir()) == []


def test_an_unknown_scheme_is_refused_naming_the_ones_known() -> None:
    with pytest.raises(RootURLError, match=r"ftp:// is not a kind of root.*s3://, gs://, az://"):
        open_store("ftp://host/root")


def test_a_url_with_no_bucket_says_how_to_write_one() -> None:
    with pytest.raises(RootURLError, match=r"names no bucket: write it s3://BUCKET/PREFIX"):
        open_store("s3:///prefix")


def test_a_file_url_is_the_local_path_it_names(tmp_path: Path) -> None:
    where = tmp_path / "a root"
    store = open_store(f"file://{where.as_posix().replace(' ', '%20')}")
    assert store.layout.root == where


def test_the_command_line_refuses_an_object_store_root_in_one_line_with_a_usage_code(
    refusal_here: str,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", "runs", "--root", "gs://bucket/prefix"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("stemma runs: root 'gs://bucket/prefix' is in Google Cloud")
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
