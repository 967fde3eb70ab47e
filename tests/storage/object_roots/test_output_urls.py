"""A step's output on a root in a bucket: its URL there, and an external runner's output kept there.

``artifact.url()`` and ``ctx.output_url`` name the objects stemma keeps the output as; they are
read back here with obstore from the URL alone. Against S3 (moto) and Azurite, each test in a
bucket of its own (``bucket_root``).
"""

from __future__ import annotations

import json
import pathlib
from pathlib import Path

import pytest

from stemma.core import OUT, Artifact, ArtifactStep, ExternalRun, StepSpec, apply, lower, run
from stemma.core.store.root_urls import SINGLE_FILE
from stemma.storage.output_mirror import MANIFEST
from tests.core.lazy_functions import CALLS_ENV, calls, count, read_and_add, write_json
from tests.storage.object_roots.conftest import (
    bucket_keys,
    local_files,
    object_bytes,
    objects_under,
)


@pytest.fixture(autouse=True)
def _calls_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


def told(out_path: str, url: str) -> str:
    """Write a directory output of two files (one in a folder); return the URL it was told."""
    count("told")
    out = pathlib.Path(out_path)
    (out / "part été").mkdir(parents=True)
    (out / "part été" / "0.txt").write_text("zero")
    (out / "summary.json").write_bytes(json.dumps({"parts": 1}).encode())
    return url


def _told_step() -> ArtifactStep:
    return apply(
        name="urls/told",
        fn=told,
        version="v1",
        build_config=lambda ctx: {"out_path": ctx.output_path, "url": ctx.output_url},
    )


def test_an_outputs_url_names_its_files_in_the_bucket_and_the_step_was_told_it(
    bucket_root: str,
) -> None:
    [built] = run(_told_step(), root=bucket_root)  # a worker process, as any run

    url = built.url()
    assert url == f"{bucket_root}/{built.relative_path}"
    assert built.value == url  # what ctx.output_url said while the step ran
    local = local_files(built.path())
    assert set(local) == {"part été/0.txt", "summary.json"}
    kept = objects_under(url)
    assert kept.pop(MANIFEST)  # written last, beside the files
    assert kept == local  # the same names, the same bytes


def test_an_output_written_as_one_file_has_the_url_of_the_object_holding_it(
    bucket_root: str,
) -> None:
    made = apply(name="urls/json", fn=write_json, version="v1", data={"a": 1}, out_path=OUT)
    [built] = run(made, root=bucket_root)

    assert built.url() == f"{bucket_root}/{built.relative_path}/{SINGLE_FILE}"
    assert object_bytes(built.url()) == built.path().read_bytes() == b'{"a": 1}'


def test_a_step_told_its_output_url_has_one_key_on_a_laptop_and_in_a_bucket(
    bucket_root: str, tmp_path: Path
) -> None:
    [in_bucket] = run(_told_step(), root=bucket_root)
    [on_disk] = run(_told_step(), root=tmp_path / "laptop")

    assert in_bucket.fingerprint == on_disk.fingerprint == lower(_told_step()).fingerprint
    assert in_bucket.value.startswith(f"{bucket_root}/outputs/")
    assert on_disk.value == on_disk.path().as_uri()


def _record_externally(root: str) -> dict[str, Artifact]:
    """Run ``data`` and ``total`` (which reads it) with a scheduler of our own: here, inline."""
    data = apply(name="data", fn=write_json, version="v0", data=[1, 2, 3], out_path=OUT)
    total = apply(name="total", fn=read_and_add, version="v0", source=data, out_path=OUT)
    memo: dict[ArtifactStep, StepSpec] = {}
    lower(total, memo)
    made: dict[str, Artifact] = {}
    with ExternalRun(root=root, name="my-scheduler") as ext:
        for spec in ext.order(memo.values()):
            call = ext.prepare(spec)
            made[spec.name] = ext.record(call, spec.step.fn(**call.kwargs))
    return made


def test_an_external_runners_outputs_are_found_and_fetched_by_another_machine(
    bucket_root: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _record_externally(bucket_root)
    keys = bucket_keys(bucket_root)
    for built in made.values():  # kept in the bucket, each whole (its manifest written last)
        assert f"{built.relative_path}/{MANIFEST}" in keys
    assert object_bytes(made["data"].url()) == made["data"].path().read_bytes()

    monkeypatch.setenv("STEMMA_STATE_DIR", str(tmp_path / "another machine's state"))
    data = apply(name="data", fn=write_json, version="v0", data=[1, 2, 3], out_path=OUT)
    total = apply(name="total", fn=read_and_add, version="v0", source=data, out_path=OUT)
    [found_data, found_total] = run(data, total, root=bucket_root)  # a fresh local half

    assert (found_data.cached, found_total.cached) == (True, True)
    assert found_total.value == 3
    assert calls() == {"write_json": 1, "read_and_add:0": 1}  # nothing ran again
    assert found_data.path() != made["data"].path()  # fetched into this machine's own half
    assert found_data.path().read_bytes() == made["data"].path().read_bytes() == b"[1, 2, 3]"
    fetched = local_files(found_total.path())
    assert fetched == local_files(made["total"].path()) == {"value.txt": b"3"}
    assert (found_data.url(), found_total.url()) == (made["data"].url(), made["total"].url())
