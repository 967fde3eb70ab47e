"""Keys are a contract: every key a small run writes, byte for byte, against figures kept here.

A user's cache is their money. These figures were taken before the layout of issue 31 (modules
moved into rooms) and must never change by accident: a change that must alter keys changes
them here, in the CHANGELOG and in docs/concepts/identity-and-keys.md, in the same commit.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from stemma.core import OUT, ArtifactStep, apply, lower, run
from stemma.core.examples import DataGenerator, MetricCalculator, Transform
from stemma.core.front.pipeline import Pipeline
from tests.core.lazy_functions import CALLS_ENV, read_and_add, write_json

GOLDEN_LAZY_FINGERPRINTS = {
    "golden/json": "a19ed7d0a1887519022c6b6d92e7a1d6",
    "golden/more": "dfe67943851d8fd483b8c49b9d617667",
}
GOLDEN_PIPELINE_ROWS = {
    "step_spec_ids": [
        "3f6f93079c4122c0192291bc51257db5",
        "b364bcd4a730a9d8e540b5866a49bd45",
        "f5d9527323a3e65c65ff39a5a53f4e34",
    ],
    "execution_spec_ids": [
        "026a72722ac880417031d142403644cc",
        "341e27a2348c4a8b078d93632ee55e40",
        "d17629c44bbbf673c3f72f93f7eb5d15",
        "d18726eb968f94deb005dd7ea05531ce",
        "d837452b27feb06342e2cea586cc9fdd",
    ],
    "artifact_ids": [
        "1f4a293f46245948d1b1c505aefc6854",
        "237baad4ab917405c6a8ebc043ea0372",
        "2f92e8a3d7caad90542263dc2b3f702e",
        "7e5052a77b57c607fb1b00d1ba29a839",
        "ad21679a0e45b4f33514e93bb6ef68c0",
        "bc31f8df13485abcf193bd4932f2773e",
    ],
}
GOLDEN_LAZY_ROWS = {
    "step_spec_ids": sorted(GOLDEN_LAZY_FINGERPRINTS.values()),
    "execution_spec_ids": [
        "2d2e7e1293084108967a9a5e13c60387",
        "d055e9eeeb0a909a4d4685b3ed0b4088",
    ],
    "artifact_ids": [
        "05282b136b2bddc8fa5b44524ead3b4a",
        "71c184cc3d4c21c53d2299d0d4e3bc16",
        "df3ce784d856334d65cd25028f98f158",
        "f8ccde172ef3aeb8889d7ab668354760",
    ],
}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STEMMA_STORE", "sqlite")  # the workers inherit it
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))
    return tmp_path / "store"


def _graph() -> tuple[ArtifactStep, ArtifactStep]:
    number = apply(name="golden/json", fn=write_json, version="v1", data={"n": 41}, out_path=OUT)
    more = apply(name="golden/more", fn=read_and_add, version="v2", source=number, out_path=OUT)
    return number, more


def _keys(root: Path) -> dict[str, list[str]]:
    with contextlib.closing(sqlite3.connect(root / "core.sqlite")) as connection:

        def column(sql: str) -> list[str]:
            return sorted(str(row[0]) for row in connection.execute(sql))

        return {
            "step_spec_ids": column("SELECT DISTINCT step_spec_id FROM steps"),
            "execution_spec_ids": column("SELECT DISTINCT execution_spec_id FROM executions"),
            "artifact_ids": column("SELECT artifact_id FROM artifacts"),
        }


def test_golden_lazy_fingerprints_are_unchanged() -> None:
    number, more = _graph()
    found = {spec.name: spec.fingerprint for spec in (lower(number), lower(more))}
    assert found == GOLDEN_LAZY_FINGERPRINTS


def test_golden_pipeline_keys_are_unchanged(root: Path) -> None:
    pipeline = Pipeline.create("golden", root=root, max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    scaled = pipeline.run(
        Transform, inputs={"dataset": generated.output("datasets")}, params={"scale": 2.0}
    )
    pipeline.run(MetricCalculator, inputs={"dataset": scaled.output("dataset")})
    pipeline.finalize()
    assert _keys(root) == GOLDEN_PIPELINE_ROWS


def test_golden_lazy_run_keys_are_unchanged(root: Path) -> None:
    run(*_graph(), root=root)
    assert _keys(root) == GOLDEN_LAZY_ROWS
