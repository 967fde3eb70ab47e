"""A root copied into a GCS bucket is read through ``object_store``'s GCS client (fake-gcs-server).

No GCS emulator on the package registries takes the uploads that client makes (an XML ``PUT``;
docs/how-to/object-store-roots.md lists each one tried and where it stops), so stemma cannot
write to one here. What it can be tested on is the other half: a root made in a bucket and
copied object by object into GCS, as ``gsutil rsync`` would, then read from another machine
(a state directory of its own) by every command that only reads, and its lazy steps' cache
found there by ``stemma plan``. Every request goes to the emulator's real server: the
listings (``list-type=2``), ``GET``s and ``HEAD``s of the Delta logs, the Parquet files and
the outputs' manifests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import obstore
import pytest
from obstore.store import from_url

from stemma.core import ArtifactStep, run
from tests.core.lazy_functions import CALLS_ENV, calls
from tests.storage.object_roots.conftest import S3_ENDPOINT, bucket_and_key

GCS_ENDPOINT = os.environ.get("STEMMA_TEST_GCS_ENDPOINT", "http://127.0.0.1:9320")

SCRIPT = """
from stemma.core import OUT, apply
from tests.core.lazy_functions import write_json
from tests.storage.object_roots.lazy_steps import add, square


def steps():
    three = apply(name="squares/3", fn=square, version="v1", x=3)
    return [
        apply(name="total", fn=add, version="v1", a=three, b=1),
        apply(name="json/a", fn=write_json, version="v1", data={"a": 1}, out_path=OUT),
    ]
"""


def _steps() -> list[ArtifactStep]:
    """The script's steps, as its ``steps()`` gives them to ``stemma plan``."""
    namespace: dict[str, Any] = {}
    exec(SCRIPT, namespace)  # (the test's own script: one text for run() and for plan)
    return namespace["steps"]()


def _copy_into_gcs(s3_root: str) -> str:
    """Copy every object of ``s3_root``'s bucket into a new GCS bucket; the root there."""
    bucket, _ = bucket_and_key(s3_root)
    source = from_url(bucket.url, endpoint=S3_ENDPOINT, client_options={"allow_http": True})
    name = f"stemma-{uuid.uuid4().hex[:16]}"
    _send(f"{GCS_ENDPOINT}/storage/v1/b", json.dumps({"name": name}).encode(), "application/json")
    copied = 0
    for batch in obstore.list(source):
        for meta in batch:
            key = str(meta["path"])
            body = bytes(obstore.get(source, key).bytes())
            where = f"{GCS_ENDPOINT}/upload/storage/v1/b/{name}/o?uploadType=media&name="
            _send(where + urllib.parse.quote(key, safe=""), body, "application/octet-stream")
            copied += 1
    assert copied > 10  # the tables, their logs, the steps' outputs
    return s3_root.replace(f"s3://{bucket.bucket}", f"gs://{name}", 1)


def _send(url: str, body: bytes, content_type: str) -> None:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            assert reply.status == 200, reply.status
    except OSError as err:
        pytest.fail(
            f"the GCS emulator does not answer at {GCS_ENDPOINT} ({err}): start it with "
            "`bash scripts/object-stores.sh start` (dev.py check and test do)"
        )


@pytest.fixture(autouse=True)
def _calls_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


@pytest.fixture
def gcs_reader(tmp_path: Path) -> dict[str, str]:
    """What another machine reading the emulator sets: a service-account file, plain HTTP."""
    account = tmp_path / "service account.json"
    account.write_text(
        json.dumps(
            {
                "disable_oauth": True,  # the emulator asks for no token
                "client_email": "",
                "private_key": "",
                "private_key_id": "",
                "gcs_base_url": GCS_ENDPOINT,
            }
        )
    )
    return {
        **os.environ,
        "GOOGLE_SERVICE_ACCOUNT": str(account),
        "STEMMA_STORAGE_OPTIONS": json.dumps({"allow_http": "true"}),
        "STEMMA_STATE_DIR": str(tmp_path / "another machine's state"),
        "PYTHONPATH": os.pathsep.join([str(Path.cwd()), *sys.path]),
    }


def _stemma(env: dict[str, str], root: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", *args, "--root", root],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"stemma {' '.join(args)}: {done.stderr}"
    return done.stdout


def test_a_root_copied_into_gcs_is_read_by_every_reading_command(
    s3_root: str, gcs_reader: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEMMA_STATE_DIR", str(tmp_path / "this machine's state"))
    total, _ = run(*_steps(), root=s3_root)
    on_s3 = json.loads(_stemma(dict(os.environ), s3_root, "artifacts", "--format", "json"))

    gcs_root = _copy_into_gcs(s3_root)
    runs = _stemma(gcs_reader, gcs_root, "runs", "--format", "json")
    [only] = json.loads(runs)
    assert only["status"] == "completed"
    on_gcs = json.loads(_stemma(gcs_reader, gcs_root, "artifacts", "--format", "json"))
    assert sorted(a["artifact_id"] for a in on_gcs) == sorted(a["artifact_id"] for a in on_s3)
    assert "squares/3" in _stemma(gcs_reader, gcs_root, "status", only["run_id"])
    assert "squares/3" in _stemma(gcs_reader, gcs_root, "explain", "squares/3")
    lineage = _stemma(gcs_reader, gcs_root, "lineage", total.artifact_id, "--format", "json")
    [edge] = json.loads(lineage)
    assert (edge["step_name"], edge["source_name"], edge["source_role"]) == (
        "total",
        "squares/3",
        "a",
    )
    assert edge["target_artifact_id"] == total.artifact_id
    assert "no problems" in _stemma(gcs_reader, gcs_root, "check")


def test_lazy_steps_copied_into_gcs_are_found_cached_by_plan(
    s3_root: str, gcs_reader: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The keys hold neither root nor scheme: what was built in one store is found in another.
    monkeypatch.setenv("STEMMA_STATE_DIR", str(tmp_path / "this machine's state"))
    run(*_steps(), root=s3_root)
    gcs_root = _copy_into_gcs(s3_root)
    script = tmp_path / "steps in a script.py"
    script.write_text(SCRIPT)

    planned = json.loads(_stemma(gcs_reader, gcs_root, "plan", str(script), "--format", "json"))

    assert calls() == {"square": 1, "add": 1, "write_json": 1}  # plan ran nothing
    assert {(row["step"], row["action"]) for row in planned} == {
        ("total", "cached"),
        ("json/a", "cached"),
    }
    # and a step that is not there would run
    script.write_text(SCRIPT.replace("x=3", "x=4"))
    planned = json.loads(_stemma(gcs_reader, gcs_root, "plan", str(script), "--format", "json"))
    assert {(row["step"], row["action"]) for row in planned} == {
        ("squares/3", "run"),
        ("total", "run"),
        ("json/a", "cached"),
    }
