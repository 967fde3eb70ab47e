"""An S3 root reached with an IAM user's keys that may read but not write.

The same promises as on Azure with a reader's SAS (test_read_only_bucket.py), against a moto
server that checks every request against its users' policies (:mod:`moto_with_iam`): a cached
rerun with the reader's keys answers every step and writes nothing (every object and its ETag
as before), and a step that must run is refused before it starts, in one line naming the root,
what S3 said and the permissions to ask for. Each run is its own process with only the keys it
was given and a local half of its own, as a reader on another machine runs.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.core.lazy_functions import CALLS_ENV, calls
from tests.storage.object_roots.moto_with_iam import Keys, MotoWithIAM
from tests.storage.object_roots.test_read_only_bucket import run_main


@pytest.fixture
def moto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoWithIAM]:
    server = MotoWithIAM(f"stemma-{uuid.uuid4().hex[:16]}")
    server.start()
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))
    monkeypatch.delenv("STEMMA_STORAGE_OPTIONS", raising=False)
    yield server
    server.stop()


def _run_with(
    moto: MotoWithIAM, keys: Keys, machine: Path, door: str, change: str
) -> tuple[int, dict[str, Any], str]:
    """One run on the bucket's root by a user holding only ``keys``, on its own machine."""
    root = f"s3://{moto.bucket}/root"
    env = {**os.environ, **keys.env(moto.endpoint), "STEMMA_STATE_DIR": str(machine)}
    return run_main(env, root, door, change)


def _objects(moto: MotoWithIAM) -> dict[str, str]:
    """Every object in the bucket with its ETag, listed with the writer's keys."""
    import obstore
    from obstore.store import S3Store

    store = S3Store(
        moto.bucket,
        endpoint=moto.endpoint,
        access_key_id=moto.writer.key_id,
        secret_access_key=moto.writer.secret,
        region="us-east-1",
        client_options={"allow_http": True},
    )
    return {str(m["path"]): str(m["e_tag"]) for batch in obstore.list(store) for m in batch}


def test_a_reader_gets_every_built_step_and_writes_nothing(
    moto: MotoWithIAM, tmp_path: Path
) -> None:
    code, first, err = _run_with(moto, moto.writer, tmp_path / "builder", "lazy", "v1")
    assert code == 0, err
    before = _objects(moto)
    assert before, "the writer's run left nothing in the bucket"
    assert not [key for key in before if "_stemma/" in key]  # the probe's object deleted

    code, again, err = _run_with(moto, moto.reader, tmp_path / "reader", "lazy", "v1")

    assert code == 0, (again, err)
    assert again["cached"] == [True, True]
    assert (again["values"], again["ids"]) == (first["values"], first["ids"])
    assert calls() == {"square": 2, "add": 1}  # the reader computed nothing
    assert _objects(moto) == before


def test_a_step_to_build_with_a_readers_keys_is_refused_before_it_starts(
    moto: MotoWithIAM, tmp_path: Path
) -> None:
    root = f"s3://{moto.bucket}/root"
    code, _, err = _run_with(moto, moto.writer, tmp_path / "builder", "lazy", "v1")
    assert code == 0, err
    before = _objects(moto)

    code, said, err = _run_with(moto, moto.reader, tmp_path / "reader", "lazy", "v2")

    assert code == 1, err
    assert (said["error"], said["url"]) == ("ReadOnlyRootError", root)
    message = said["message"]
    assert message.startswith(f"root {root!r} cannot be written with these credentials")
    assert "403 Forbidden" in message  # what S3 said
    assert "s3:PutObject" in message  # the fix: the permissions to ask for
    assert "\n" not in message
    assert calls() == {"square": 2, "add": 1}  # the refused step never started
    assert _objects(moto) == before  # no lease, no probe's object, no event


def test_a_pipeline_reader_is_answered_and_its_new_step_refused(
    moto: MotoWithIAM, tmp_path: Path
) -> None:
    root = f"s3://{moto.bucket}/root"
    code, first, err = _run_with(moto, moto.writer, tmp_path / "builder", "pipeline", "2")
    assert code == 0, err
    assert first["ok"] is True
    before = _objects(moto)

    code, cached, err = _run_with(moto, moto.reader, tmp_path / "r1", "pipeline", "2")
    assert code == 0, err
    assert (cached["ok"], cached["cache"]) == (True, ["step", "step"])
    assert cached["outputs"] == first["outputs"]
    assert _objects(moto) == before  # the cache hits' events were not written

    code, said, err = _run_with(moto, moto.reader, tmp_path / "r2", "pipeline", "3")
    assert code == 1, err
    assert (said["error"], said["url"]) == ("ReadOnlyRootError", root)
    assert "\n" not in said["message"]
    assert _objects(moto) == before
