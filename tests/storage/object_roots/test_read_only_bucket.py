"""A bucket root reached with credentials that may read but not write (an Azure SAS ``sp=rl``).

What a local root nobody may write promises (tests/integration/test_read_only_root.py) holds
in a bucket: every cached step is answered from it, a step that must run is refused before it
starts, in one line naming the root and the permission to ask for, and the container is not
written (its blobs and their ETags the same before and after).

Each run is its own process on its own machine's local half (``$STEMMA_STATE_DIR``) with only
the SAS it was given (no account key), as a reader elsewhere would run: an ``object_store``
client keeps the credentials it was made with for the life of its process.

S3 has the same tests with an IAM reader's keys, against a moto server that enforces IAM
(test_read_only_s3.py, which runs :func:`main` too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stemma.core import ArtifactStep, Pipeline, RootURLError, StepFailedError, apply, run
from stemma.core.errors import ReadOnlyRootError
from stemma.core.examples import DataGenerator, Transform
from stemma.storage import DeltaStore
from tests.core.lazy_functions import CALLS_ENV, calls
from tests.storage.object_roots.azure_sas import FULL, READ_ONLY, container_sas
from tests.storage.object_roots.conftest import AZURITE_ACCOUNT, AZURITE_KEY, make_container
from tests.storage.object_roots.lazy_steps import add, square

CHECKOUT = Path(__file__).resolve().parents[3]
_MAIN = (
    "import sys; from tests.storage.object_roots.test_read_only_bucket import main; "
    "sys.exit(main(sys.argv[1:]))"
)


def two_steps(version: str) -> list[ArtifactStep]:
    """Two squares and their sum (the sum at ``version``: another version must be built)."""
    two = apply(name="squares/2", fn=square, version="v1", x=2)
    three = apply(name="squares/3", fn=square, version="v1", x=3)
    return [two, apply(name="sum", fn=add, version=version, a=two, b=three)]


def pipeline_steps(root: str, scale: float) -> dict[str, Any]:
    """A two-step Pipeline: generate, then transform at ``scale``; its steps' cache and summary."""
    pipeline = Pipeline.create("read-only-bucket", root=root, max_workers=1)
    made = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    scaled = pipeline.run(
        Transform, inputs={"dataset": made.output("datasets")}, params={"scale": scale}
    )
    summary = pipeline.finalize()
    return {
        "cache": [made.metadata.get("cache"), scaled.metadata.get("cache")],
        "ok": summary["overall_success"],
        "outputs": sorted(pipeline.artifact_ids(scaled.output("dataset"))),
    }


def main(argv: list[str]) -> int:
    """One run on ``ROOT`` by the lazy door or a Pipeline; what it built, or its error, as JSON.

    ``python -c`` runs this in its own process (see :func:`_run_with_sas`).
    """
    root, door, change = argv
    try:
        if door == "lazy":
            built = run(*two_steps(change), root=root)
            said: dict[str, Any] = {
                "values": [a.value for a in built],
                "cached": [a.cached for a in built],
                "ids": [a.artifact_id for a in built],
            }
        else:
            said = pipeline_steps(root, float(change))
    except (StepFailedError, ReadOnlyRootError) as err:
        cause = err.__cause__ if isinstance(err, StepFailedError) else err
        said = {
            "error": type(cause).__name__,
            "message": str(cause),
            "url": getattr(cause, "url", None),
        }
        print(json.dumps(said))
        return 1
    print(json.dumps(said))
    return 0


def _run_with_sas(
    root: str, container: str, permissions: str, machine: Path, door: str, change: str
) -> tuple[int, dict[str, Any], str]:
    """Run :func:`main` as a user holding only a SAS with ``permissions`` on ``container``."""
    env = {
        **os.environ,
        "AZURE_STORAGE_SAS_KEY": container_sas(container, permissions),
        "STEMMA_STATE_DIR": str(machine),
    }
    env.pop("AZURE_STORAGE_ACCOUNT_KEY")  # (a key would win over the SAS: the reader has none)
    return run_main(env, root, door, change)


def run_main(
    env: dict[str, str], root: str, door: str, change: str
) -> tuple[int, dict[str, Any], str]:
    """Run :func:`main` in its own process with ``env``: its exit, what it said, its stderr."""
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, root, door, change],
        cwd=CHECKOUT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    assert lines, f"the run printed nothing (exit {done.returncode}): {done.stderr[-3000:]}"
    return done.returncode, json.loads(lines[-1]), done.stderr


def _blobs(container: str) -> dict[str, str]:
    """Every blob in ``container`` with its ETag, listed with the account's key."""
    import obstore
    from obstore.store import from_url

    store = from_url(
        f"az://{container}",
        account_name=AZURITE_ACCOUNT,
        account_key=AZURITE_KEY,
        use_emulator=True,
        client_options={"allow_http": True},
    )
    return {str(m["path"]): str(m["e_tag"]) for batch in obstore.list(store) for m in batch}


@pytest.fixture(autouse=True)
def _calls_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


@pytest.fixture
def container(az_env: str) -> str:
    """A new container on Azurite (the environment of its users set, the key among it)."""
    return make_container(az_env)


def test_a_reader_gets_every_built_step_and_writes_nothing(container: str, tmp_path: Path) -> None:
    root = f"az://{container}/root"
    code, first, err = _run_with_sas(root, container, FULL, tmp_path / "builder", "lazy", "v1")
    assert code == 0, err
    before = _blobs(container)
    assert not [key for key in before if "_stemma/" in key]  # the probe's object deleted

    code, again, err = _run_with_sas(root, container, READ_ONLY, tmp_path / "reader", "lazy", "v1")

    assert code == 0, (again, err)
    assert again["cached"] == [True, True]
    assert (again["values"], again["ids"]) == (first["values"], first["ids"])
    assert calls() == {"square": 2, "add": 1}  # the reader computed nothing
    assert _blobs(container) == before


@pytest.mark.parametrize("version", ["v2", "dev"])  # (dev: a step that takes no lease)
def test_a_step_to_build_with_a_read_only_sas_is_refused_before_it_starts(
    container: str, tmp_path: Path, version: str
) -> None:
    root = f"az://{container}/root"
    code, _, err = _run_with_sas(root, container, FULL, tmp_path / "builder", "lazy", "v1")
    assert code == 0, err
    before = _blobs(container)

    code, said, err = _run_with_sas(
        root, container, READ_ONLY, tmp_path / "reader", "lazy", version
    )

    assert code == 1, err
    assert (said["error"], said["url"]) == ("ReadOnlyRootError", root)
    message = said["message"]
    assert message.startswith(f"root {root!r} cannot be written with these credentials")
    assert "403 Forbidden, AuthorizationPermissionMismatch" in message  # what Azure said
    assert "sp=racwdl" in message  # the fix: the permissions to ask for
    assert "\n" not in message
    assert calls() == {"square": 2, "add": 1}  # the refused step never started
    assert _blobs(container) == before  # no lease, no probe's object, no event


def test_a_pipeline_reader_is_answered_and_its_new_step_refused(
    container: str, tmp_path: Path
) -> None:
    root = f"az://{container}/root"
    code, first, err = _run_with_sas(root, container, FULL, tmp_path / "builder", "pipeline", "2")
    assert code == 0, err
    assert first["ok"] is True
    before = _blobs(container)

    code, cached, err = _run_with_sas(root, container, READ_ONLY, tmp_path / "r1", "pipeline", "2")
    assert code == 0, err
    assert (cached["ok"], cached["cache"]) == (True, ["step", "step"])
    assert cached["outputs"] == first["outputs"]
    assert _blobs(container) == before  # the cache hits' events were not written

    code, said, err = _run_with_sas(root, container, READ_ONLY, tmp_path / "r2", "pipeline", "3")
    assert code == 1, err
    assert (said["error"], said["url"]) == ("ReadOnlyRootError", root)
    assert "\n" not in said["message"]
    assert _blobs(container) == before


def test_a_store_that_cannot_be_reached_by_the_probe_keeps_its_unreachable_error(
    az_env: str,
) -> None:
    store = DeltaStore("az://no-such-container/root")  # (opening makes no request)

    with pytest.raises(RootURLError) as raised:
        store.refuse_if_unwritable("a step")

    message = str(raised.value)
    assert message.startswith("root 'az://no-such-container/root' cannot be reached in Azure")
    assert "\n" not in message


def test_a_run_with_the_account_key_builds_and_leaves_no_probe(container: str) -> None:
    root = f"az://{container}/root"

    built = run(*two_steps("v1"), root=root)

    assert [a.cached for a in built] == [False, False]
    assert not [key for key in _blobs(container) if "_stemma/" in key]
