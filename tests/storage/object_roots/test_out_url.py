"""A step that writes its output with its own tools, straight into the bucket (``OUT_URL``).

The step is told a prefix of its own attempt's in the root's bucket; what it puts there, read
with obstore from the URL alone here, becomes its output once it returns: kept under the
output's URL, fetched by another machine, the same artifact as the same files written under
``OUT`` on a laptop, for a worker's step and an external runner's. Against S3 (moto) and
Azurite, each test in a bucket of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stemma.core import OUT, OUT_URL, ExternalRun, StepFailedError, apply, lower, run
from stemma.core.store.root_urls import SINGLE_FILE
from stemma.storage import vacuum_root
from stemma.storage.output_mirror import MANIFEST
from tests.core.lazy_functions import CALLS_ENV, calls
from tests.storage.object_roots.conftest import (
    bucket_keys,
    local_files,
    object_bytes,
    objects_under,
)
from tests.storage.object_roots.lazy_steps import (
    write_beside_a_folder_marker,
    write_both,
    write_one_object,
    write_parts,
    write_then_fail,
)

_PARTS = {
    "part-0.txt": b"part 0",
    "part-1.txt": b"part 1",
    "nested \u00e9t\u00e9/summary.json": b'{"parts": 2}',
}


@pytest.fixture(autouse=True)
def _calls_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


def _attempt_keys(root: str) -> list[str]:
    """The keys, relative to ``root``, under its attempts' prefixes."""
    return [key for key in bucket_keys(root) if key.startswith("_stemma/attempts/")]


def test_what_a_step_puts_under_out_url_is_its_output_kept_and_found_elsewhere(
    bucket_root: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = apply(name="own-tools/parts", fn=write_parts, version="v1", out_url=OUT_URL, parts=2)
    [built] = run(step, root=bucket_root)

    told = built.value
    assert told.startswith(f"{bucket_root}/_stemma/attempts/")  # the attempt's own prefix
    assert local_files(built.path()) == _PARTS  # brought to this machine, as any output
    kept = objects_under(built.url())
    assert kept.pop(MANIFEST)
    assert kept == _PARTS  # copied to the output's URL inside the bucket
    assert _attempt_keys(bucket_root) == []  # and the attempt's prefix emptied

    monkeypatch.setenv("STEMMA_STATE_DIR", str(tmp_path / "another machine's state"))
    [found] = run(step, root=bucket_root)
    assert found.cached
    assert calls() == {"write_parts": 1}
    assert found.path() != built.path()
    assert local_files(found.path()) == _PARTS


def test_out_url_gives_the_same_key_and_artifact_on_a_laptop_and_in_a_bucket(
    bucket_root: str, tmp_path: Path
) -> None:
    step = apply(name="own-tools/parts", fn=write_parts, version="v1", out_url=OUT_URL, parts=2)
    [in_bucket] = run(step, root=bucket_root)
    [on_disk] = run(step, root=tmp_path / "laptop")

    assert on_disk.value == str(Path(on_disk.value))  # a local path there, as OUT is
    assert in_bucket.fingerprint == on_disk.fingerprint == lower(step).fingerprint
    assert in_bucket.artifact_id == on_disk.artifact_id  # the same files, the same artifact
    assert local_files(on_disk.path()) == _PARTS
    with_out = apply(name="own-tools/parts", fn=write_parts, version="v1", out_url=OUT, parts=2)
    assert lower(with_out).fingerprint != lower(step).fingerprint  # keyed apart from OUT
    assert lower(step).config["inputs"]["out_url"] == "<write_url>"  # as StepSpec shows it


def test_one_object_put_at_out_url_is_an_output_written_as_one_file(bucket_root: str) -> None:
    step = apply(name="own-tools/one", fn=write_one_object, version="v1", out_url=OUT_URL, text="x")
    [built] = run(step, root=bucket_root)

    assert built.path().read_bytes() == b"x"
    assert built.url() == f"{bucket_root}/{built.relative_path}/{SINGLE_FILE}"
    assert object_bytes(built.url()) == b"x"
    assert _attempt_keys(bucket_root) == []


def test_a_step_that_dies_after_writing_leaves_its_attempt_for_vacuum(bucket_root: str) -> None:
    step = apply(name="own-tools/fails", fn=write_then_fail, version="v1", out_url=OUT_URL)
    with pytest.raises(StepFailedError) as failed:
        run(step, root=bucket_root)
    assert "failed after writing one part" in str(failed.value.__cause__)

    [left] = _attempt_keys(bucket_root)
    assert left.endswith("/part-0.txt")  # where it can be looked at, no output made of it
    assert not any("/outputs/" in key for key in bucket_keys(bucket_root))

    report = vacuum_root(bucket_root, retain_hours=0, min_retain_hours=0, apply=True)
    assert [(r.kind, str(r.path)) for r in report.removals if r.kind == "attempts"] == [
        ("attempts", f"{bucket_root}/{left}")
    ]
    assert _attempt_keys(bucket_root) == []


def test_a_file_written_under_both_out_and_out_url_fails_the_step_naming_both(
    bucket_root: str,
) -> None:
    step = apply(name="own-tools/both", fn=write_both, version="v1", out_path=OUT, out_url=OUT_URL)
    with pytest.raises(StepFailedError) as failed:
        run(step, root=bucket_root)
    assert "'a.txt' both under OUT and under OUT_URL" in str(failed.value.__cause__)


def test_an_external_runners_step_writes_under_out_url_too(bucket_root: str) -> None:
    step = apply(name="own-tools/parts", fn=write_parts, version="v1", out_url=OUT_URL, parts=2)
    spec = lower(step)
    with ExternalRun(root=bucket_root, name="my-scheduler") as ext:
        call = ext.prepare(spec)
        built = ext.record(call, write_parts(**call.kwargs))

    assert built.value.startswith(f"{bucket_root}/_stemma/attempts/")
    assert local_files(built.path()) == _PARTS
    kept = objects_under(built.url())
    assert kept.pop(MANIFEST)
    assert kept == _PARTS
    assert _attempt_keys(bucket_root) == []
    [found] = run(step, root=bucket_root)
    assert found.cached
    assert found.artifact_id == built.artifact_id


def test_an_empty_folder_object_beside_the_files_is_not_taken_for_a_file(s3_root: str) -> None:
    step = apply(
        name="own-tools/marker", fn=write_beside_a_folder_marker, version="v1", out_url=OUT_URL
    )
    [built] = run(step, root=s3_root)

    assert local_files(built.path()) == {"dir/f.txt": b"in a folder"}
    kept = objects_under(built.url())
    assert kept.pop(MANIFEST)
    assert kept == {"dir/f.txt": b"in a folder"}


def test_an_object_the_store_will_not_copy_is_put_from_this_machines_copy(
    s3_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import obstore

    def refused(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the store copies at most 5 GB in one request")  # as S3 refuses

    step = apply(name="own-tools/parts", fn=write_parts, version="v1", out_url=OUT_URL, parts=2)
    with ExternalRun(root=s3_root, name="my-scheduler") as ext:  # kept in this process
        call = ext.prepare(lower(step))
        monkeypatch.setattr(obstore, "copy", refused)
        built = ext.record(call, write_parts(**call.kwargs))

    kept = objects_under(built.url())
    assert kept.pop(MANIFEST)
    assert kept == _PARTS  # each put from the output's local copy instead
    assert _attempt_keys(s3_root) == []


def test_a_retry_starts_from_an_empty_prefix_whatever_the_first_try_left(s3_root: str) -> None:
    import obstore
    from obstore.store import from_url

    from stemma.core.store.locations import RootLayout, resolve_root
    from stemma.storage.written_outputs import (
        WrittenOutputError,
        clear_written,
        written_objects,
    )

    layout = RootLayout(resolve_root(s3_root))
    url = f"{s3_root}/_stemma/attempts/first-try"
    store = from_url(s3_root)
    for key in ("_stemma/attempts/first-try", "_stemma/attempts/first-try/dir/b.txt"):
        obstore.put(store, key, b"half")
    with pytest.raises(WrittenOutputError, match="as one object and also 1 object"):
        written_objects(layout, url)  # no output could be made of this

    clear_written(layout, url)

    assert _attempt_keys(s3_root) == []
    assert written_objects(layout, url) == {}
