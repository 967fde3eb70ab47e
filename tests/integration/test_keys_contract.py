"""Keys are a contract: a root built by an earlier engine is answered entirely from its cache.

``fixtures/keys_v0/`` was built by stemma as of 3f484f0 (two engines, before they became one)
from the graph in ``keys_v0_graph.py``. The engine of today must find every step of that graph
already built there, with the same fingerprints and artifact ids, and execute nothing.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path

from keys_v0_graph import DATA_FILE, FIXTURE, function_steps, operation_steps

from stemma.core import run
from stemma.storage import executions


def _expected() -> list[dict[str, Any]]:
    return json.loads((FIXTURE / "expected.json").read_text())


EMPTY_OUTPUT = "outputs/fixture/nothing/v0-2bbf5cd37ca3c81a"
"""fixture/nothing's output, an empty directory: git keeps no empty directory, so it is made
again here (a file in it to keep it would change its content hash, and so its artifact id)."""


def _copy_fixture(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    copy = tmp_path / "old root copy"  # a path with a space, as users have
    shutil.copytree(FIXTURE, copy)
    (copy / "root" / EMPTY_OUTPUT).mkdir(parents=True, exist_ok=True)
    return copy / "root", copy / "data"


def _seen(artifacts: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": a.name,
            "fingerprint": a.fingerprint,
            "artifact_id": a.artifact_id,
            "relative_path": a.relative_path,
            "value": a.value,
        }
        for a in artifacts
    ]


def test_keys_fixture_root_is_answered_entirely_from_cache(tmp_path: pathlib.Path) -> None:
    root, data = _copy_fixture(tmp_path)
    before = executions(root).height
    artifacts = run(*function_steps(data), *operation_steps(), root=root)
    assert all(a.cached for a in artifacts), [a.name for a in artifacts if not a.cached]
    seen, expected = _seen(artifacts), _expected()
    assert seen[:3] == expected[:3]  # function steps: the same output, path and value
    # An operation step ran as a nested Pipeline then, as an engine step now: the same key,
    # answered by the execution cache of its units, with the same output artifacts.
    (operation,) = seen[3:]
    (before_operation,) = expected[3:]
    assert operation["fingerprint"] == before_operation["fingerprint"]
    assert operation["value"]["outputs"] == before_operation["value"]["outputs"]
    assert executions(root).height == before  # nothing executed


def test_keys_fresh_function_steps_make_the_fixture_fingerprints_and_ids(
    tmp_path: pathlib.Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / DATA_FILE).write_text((FIXTURE / "data" / DATA_FILE).read_text())
    artifacts = run(*function_steps(data), root=tmp_path / "fresh")
    assert not any(a.cached for a in artifacts)
    assert _seen(artifacts) == _expected()[:3]
